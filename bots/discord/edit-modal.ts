import { LabelBuilder, ModalBuilder, TextInputBuilder, TextInputStyle, type ModalSubmitInteraction } from 'discord.js';
import { PROMPT_INPUT_MAX } from './command-choices.js';

const PROMPT_INPUT_ID = 'prompt';

/** The modal that asks what to change in an image ("Edit image" menu, Edit button). */
export function editPromptModal(customId: string, title: string): ModalBuilder {
  return new ModalBuilder()
    .setCustomId(customId)
    .setTitle(title.slice(0, 45))
    .addLabelComponents(
      new LabelBuilder()
        .setLabel('What should change?')
        .setTextInputComponent(
          new TextInputBuilder()
            .setCustomId(PROMPT_INPUT_ID)
            .setStyle(TextInputStyle.Paragraph)
            .setPlaceholder('e.g. make it night, with a full moon')
            .setRequired(true)
            .setMinLength(1)
            .setMaxLength(PROMPT_INPUT_MAX),
        ),
    );
}

export function promptOf(interaction: ModalSubmitInteraction): string {
  return interaction.fields.getTextInputValue(PROMPT_INPUT_ID);
}
