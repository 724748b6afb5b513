import type { ChatInputCommandInteraction, SlashCommandSubcommandsOnlyBuilder } from 'discord.js';
import { changeStyle, describeStyles, PROMPT_PLACEHOLDER, say as sayIn, STYLE_NAME_MAX, HOUSE_STYLE_LIMITS } from '../../runner/index.js';
import type { BotContext } from '../bot-context.js';
import { described } from '../command-words.js';
import { DISCORD_LIMITS } from '../discord-facts.js';
import { answerAdmin } from './admin-settings.js';
import { OPTION_NAME_OF_FIELD } from '../command-choices.js';
import { commandAs } from '../command-words.js';
import { addImageOptions, readImageOptions } from './job-options.js';

/** How members pick a style on Discord, and how admins define one: named in the answers, as the reader's Discord shows them. */
const howToPick = (locale: string) => commandAs(locale, 'imagine', 'style:');
const howToDefine = (locale: string) => commandAs(locale, 'admin', 'style');
/** Room a style's text may take in the `text` option: its characters and the placeholder. */
const TEXT_MAX = HOUSE_STYLE_LIMITS.textLength + PROMPT_PLACEHOLDER.length;

/**
 * Adds `style name text [size] [quality] [background] [format] [count]` (define or replace a house style; `text:
 * clear` removes it) and `styles` (list them) to `/imagine-admin`.
 */
export function addStyleSubcommands<B extends SlashCommandSubcommandsOnlyBuilder>(builder: B): B {
  const placeholder = { placeholder: PROMPT_PLACEHOLDER };
  builder
    .addSubcommand((sub) =>
      addImageOptions(
        described(sub.setName('style'), 'discord.command.admin.style')
          .addStringOption((o) =>
            described(o.setName('name'), 'discord.option.style_name')
              .setRequired(true)
              .setMaxLength(STYLE_NAME_MAX),
          )
          .addStringOption((o) =>
            described(o.setName('text'), 'discord.option.style_text', placeholder)
              .setRequired(true)
              .setMaxLength(TEXT_MAX),
          ),
        true,
      ),
    )
    .addSubcommand((sub) => described(sub.setName('styles'), 'discord.command.admin.styles'));
  return builder;
}

/** `/imagine-admin style` and `/imagine-admin styles`: private answers, for the same admins as the settings. */
export async function answerStyles(interaction: ChatInputCommandInteraction, ctx: BotContext): Promise<void> {
  await answerAdmin(interaction, ctx, `✋ ${sayIn(interaction.locale, 'styles.not_admin', { scope: 'server' })}`, async (requester, say) => {
    if (interaction.options.getSubcommand() === 'styles') {
      const styles = await ctx.runner.styles.list(requester);
      await say(describeStyles(styles, howToPick(interaction.locale), howToDefine(interaction.locale), interaction.locale, { markup: { bold: (text) => `**${text}**` }, maxChars: DISCORD_LIMITS.contentChars }));
      return;
    }
    const answer = await changeStyle(ctx.runner.styles, requester, interaction.options.getString('name', true), interaction.options.getString('text', true), readImageOptions(interaction), howToPick(interaction.locale), OPTION_NAME_OF_FIELD);
    await say(answer.ok ? `✅ ${answer.message}` : `✋ ${answer.message}`);
  });
}
