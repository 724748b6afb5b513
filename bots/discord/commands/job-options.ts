import type { ChatInputCommandInteraction, SlashCommandOptionsOnlyBuilder } from 'discord.js';
import type { Background, OutputFormat, Quality, Size } from '../../../src/index.js';
import type { JobOptions } from '../../runner/index.js';
import { BACKGROUND_CHOICES, COUNT_RANGE, FORMAT_CHOICES, QUALITY_CHOICES, SIZE_CHOICES } from '../command-choices.js';

/** Adds the size, quality, background and format options (choices from the spec), and `count` when asked. */
export function addImageOptions<B extends SlashCommandOptionsOnlyBuilder>(builder: B, withCount: boolean): B {
  builder
    .addStringOption((o) => o.setName('size').setDescription('Width x height of the result').addChoices(...SIZE_CHOICES))
    .addStringOption((o) => o.setName('quality').setDescription('Higher quality costs more and takes longer').addChoices(...QUALITY_CHOICES))
    .addStringOption((o) => o.setName('background').setDescription('transparent needs format png or webp').addChoices(...BACKGROUND_CHOICES))
    .addStringOption((o) => o.setName('format').setDescription('File format of the result').addChoices(...FORMAT_CHOICES));
  if (withCount) {
    builder.addIntegerOption((o) => o.setName('count').setDescription('How many images').setMinValue(COUNT_RANGE.min).setMaxValue(COUNT_RANGE.max));
  }
  return builder;
}

/** The options a user set (unset ones are left out, so the spec's defaults apply). */
export function readImageOptions(interaction: ChatInputCommandInteraction): JobOptions {
  const options: JobOptions = {};
  const size = interaction.options.getString('size');
  const quality = interaction.options.getString('quality');
  const background = interaction.options.getString('background');
  const format = interaction.options.getString('format');
  const count = interaction.options.getInteger('count');
  if (size !== null) options.size = size as Size;
  if (quality !== null) options.quality = quality as Quality;
  if (background !== null) options.background = background as Background;
  if (format !== null) options.output_format = format as OutputFormat;
  if (count !== null) options.n = count;
  return options;
}
