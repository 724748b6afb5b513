import type { AutocompleteInteraction, ChatInputCommandInteraction, SlashCommandIntegerOption, SlashCommandOptionsOnlyBuilder, SlashCommandStringOption } from 'discord.js';
import { type Background, type OutputFormat, type Quality, type Size, TRANSPARENT_FORMATS } from 'pictor';
import { anyOf, styleChoiceName, STYLE_NAME_MAX, type JobOptions, type MessageKey } from '../../runner/index.js';
import { answerBudgetOf } from '../answer-budget.js';
import type { BotContext } from '../bot-context.js';
import { DISCORD_LIMITS } from '../discord-facts.js';
import { loggableError } from '../loggable-error.js';
import { scopeOf } from '../requester.js';
import { described } from '../command-words.js';
import { BACKGROUND_CHOICES, COUNT_RANGE, FORMAT_CHOICES, PROMPT_OPTION_MAX, QUALITY_CHOICES, SIZE_CHOICES } from '../command-choices.js';

/** Adds the required `prompt` option, described by the catalog message `key` (what to draw, what to change). */
export function addPromptOption<B extends SlashCommandOptionsOnlyBuilder>(builder: B, key: MessageKey): B {
  builder.addStringOption((o) => described(o.setName('prompt'), key).setRequired(true).setMaxLength(PROMPT_OPTION_MAX));
  return builder;
}

/** What takes the image options: a command, or a subcommand (`/imagine-admin style`). */
interface ImageOptionsBuilder {
  addStringOption(input: (option: SlashCommandStringOption) => SlashCommandStringOption): ImageOptionsBuilder;
  addIntegerOption(input: (option: SlashCommandIntegerOption) => SlashCommandIntegerOption): ImageOptionsBuilder;
}

/** Adds the size, quality, background and format options (choices from the spec), and `count` when asked. */
export function addImageOptions<B extends ImageOptionsBuilder>(builder: B, withCount: boolean): B {
  builder
    .addStringOption((o) => described(o.setName('size'), 'discord.option.size').addChoices(...SIZE_CHOICES))
    .addStringOption((o) =>
      described(o.setName('quality'), 'discord.option.quality').addChoices(...QUALITY_CHOICES),
    )
    .addStringOption((o) =>
      described(o.setName('background'), 'discord.option.background', { formats: anyOf(TRANSPARENT_FORMATS) }).addChoices(...BACKGROUND_CHOICES),
    )
    .addStringOption((o) => described(o.setName('format'), 'discord.option.format').addChoices(...FORMAT_CHOICES));
  if (withCount) {
    builder.addIntegerOption((o) =>
      described(o.setName('count'), 'discord.option.count').setMinValue(COUNT_RANGE.min).setMaxValue(COUNT_RANGE.max),
    );
  }
  return builder;
}

/** Adds `style`: a house style of the server, offered by autocomplete as the member types (`suggestStyles`). */
export function addStyleOption<B extends SlashCommandOptionsOnlyBuilder>(builder: B): B {
  builder.addStringOption((o) =>
    described(o.setName('style'), 'discord.option.style').setMaxLength(STYLE_NAME_MAX).setAutocomplete(true),
  );
  return builder;
}

/** The house style a member picked, if any. */
export function readStyle(interaction: ChatInputCommandInteraction): string | undefined {
  return interaction.options.getString('style') ?? undefined;
}

/**
 * The server's house styles whose name holds what the member typed so far, as autocomplete choices (the style's text
 * beside its name). Autocomplete is answered within Discord's 3 s too: the styles are read within what is left of the
 * interaction's answer budget (answer-budget.ts), and when they are not read in time no choices are offered.
 */
export async function suggestStyles(interaction: AutocompleteInteraction, ctx: BotContext): Promise<void> {
  const focused = interaction.options.getFocused(true);
  const typed = focused.name === 'style' ? String(focused.value).trim().toLowerCase() : undefined;
  const styles =
    typed === undefined
      ? []
      : await answerBudgetOf(interaction)
          .within(() => ctx.runner.styles.list({ platform: 'discord', scopeId: scopeOf(interaction) }), 'the house styles')
          .catch((error: unknown) => {
            ctx.logger.warn({ err: loggableError(error) }, 'offered no house styles: they could not be read in time');
            return [];
          });
  const choices = styles
    .filter((style) => style.name.includes(typed!))
    .slice(0, DISCORD_LIMITS.choicesPerOption)
    .map((style) => ({ name: styleChoiceName(style, DISCORD_LIMITS.choiceNameLength, interaction.locale), value: style.name }));
  await interaction.respond(choices).catch((error: unknown) => ctx.logger.warn({ err: String(error) }, 'could not offer the house styles (the member typed on, or 3 s passed)'));
}

/** Adds `private` (shown only to the member; unset: their default, `/imagine-settings`). */
export function addPrivateOption<B extends SlashCommandOptionsOnlyBuilder>(builder: B): B {
  builder.addBooleanOption((o) => described(o.setName('private'), 'discord.option.private'));
  return builder;
}

/** `private:` as the member chose it; undefined when they did not (their default applies). */
export function readPrivate(interaction: ChatInputCommandInteraction): boolean | undefined {
  return interaction.options.getBoolean('private') ?? undefined;
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
