import { LabelBuilder, ModalBuilder, TextInputBuilder, TextInputStyle, type ModalSubmitInteraction } from 'discord.js';
import { say } from '../runner/index.js';
import { PROMPT_INPUT_MAX } from './command-choices.js';

const PROMPT_INPUT_ID = 'prompt';

/** The modal that asks what to change in an image ("Edit image" menu, Edit button). */
export function editPromptModal(customId: string, title: string, locale: string): ModalBuilder {
  return new ModalBuilder()
    .setCustomId(customId)
    .setTitle(title.slice(0, 45))
    .addLabelComponents(
      new LabelBuilder()
        .setLabel(say(locale, 'edit.what_should_change'))
        .setTextInputComponent(
          new TextInputBuilder()
            .setCustomId(PROMPT_INPUT_ID)
            .setStyle(TextInputStyle.Paragraph)
            .setPlaceholder(say(locale, 'discord.edit.placeholder'))
            .setRequired(true)
            .setMinLength(1)
            .setMaxLength(PROMPT_INPUT_MAX),
        ),
    );
}

export function promptOf(interaction: ModalSubmitInteraction): string {
  return interaction.fields.getTextInputValue(PROMPT_INPUT_ID);
}
