import { InteractionContextType, type Attachment } from 'discord.js';
import { say, words } from '../../runner/index.js';
import { acknowledge } from '../acknowledge.js';
import { answerBudgetOf } from '../answer-budget.js';
import { messageMenu } from '../command-words.js';
import { encodeCustomId } from '../custom-ids.js';
import { InputImageError, isAllowedImageUrl, type AttachmentSource } from '../download-images.js';
import { editPromptModal } from '../edit-modal.js';
import { draftsToDrop } from '../edit-drafts.js';
import { refuseInputPrivately, refusePrivately } from '../refuse-privately.js';
import { requesterOf } from '../requester.js';
import type { MessageMenuCommand } from './command.js';

const IMAGE_EXTENSIONS = /\.(png|jpe?g|webp)$/i;

/** Attachments that claim to be images (their bytes are checked once downloaded). */
function looksLikeImage(attachment: Attachment): boolean {
  return attachment.contentType ? attachment.contentType.startsWith('image/') : IMAGE_EXTENSIONS.test(attachment.name);
}

/**
 * "Edit image" in a message's Apps menu: opens a modal asking what to change.
 * The message's images are downloaded when the modal is sent (see edit-drafts.ts).
 */
export default {
  kind: 'message-menu',
  personal: true,
  data: messageMenu('edit_image').setContexts(InteractionContextType.Guild).toJSON(),
  async execute(interaction, ctx) {
    const attachments = [...interaction.targetMessage.attachments.values()].filter(looksLikeImage);
    const { locale } = interaction;
    const sources: AttachmentSource[] = attachments.map((a, i) => ({
      // Named in the member's language: the draft is theirs, and only they see what is said of its images.
      label: say(locale, 'discord.edit.message_image', { images: attachments.length, index: i + 1 }),
      filename: a.name,
      url: a.url,
      size: a.size,
    }));
    // What Discord reported of the message's images, refused before the runner is asked: logged, and told privately.
    let refusal: InputImageError | undefined;
    if (sources.length === 0) refusal = new InputImageError('no_images', words('discord.edit.message_has_no_images'));
    else if (sources.length > ctx.downloadPolicy.maxCount) refusal = new InputImageError('too_many_images', words('discord.edit.message_has_too_many', { max: ctx.downloadPolicy.maxCount, count: sources.length }));
    else if (sources.some((s) => !isAllowedImageUrl(s.url, ctx.downloadPolicy.allowedHosts))) refusal = new InputImageError('host_not_allowed', words('discord.edit.message_links_elsewhere'));
    if (refusal) return refuseInputPrivately(ctx, interaction, refusal);
    const requester = requesterOf(interaction, ctx.adminRoleIds);
    // The runner's intake for a form: its rules of who and where, and a budget left, before the modal opens.
    await ctx.runner.requestForm(requester, {
      refuse: (reason) => refusePrivately(ctx, interaction, reason),
      accept: async () => {
        const key = ctx.store.newKey();
        const title = say(locale, 'discord.edit.title_message', { images: sources.length });
        const ack = await acknowledge('edit image: modal', () => interaction.showModal(editPromptModal(encodeCustomId({ action: 'edit-message', key }), title, locale)), ctx.logger);
        if (ack === 'expired') return;
        // Only the links are kept: the images are downloaded once, when the modal is sent.
        await ctx.store.add({ key, kind: 'edit', prompt: '', options: {}, requester, status: 'draft', sources });
        for (const old of draftsToDrop(await ctx.store.drafts(requester.userId), requester.userId)) await ctx.store.remove(old);
      },
    }, { answerBy: answerBudgetOf(interaction).endsAt });
  },
} satisfies MessageMenuCommand;
