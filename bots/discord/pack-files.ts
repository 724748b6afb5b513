import { DISCORD_LIMITS, REQUEST_ROOM_BYTES } from './discord-facts.js';
import type { OutgoingFile } from './fit-images.js';

/**
 * Files in order, packed into as few messages as Discord takes — the one rule for it, applied once, by `JobView`: a
 * job's end carries the first pack and each message after it one more. `ReplyTarget` sends each message as it comes
 * (what Discord still refuses together goes one file per message). Discord documents its limits on uploads in two places: "Uploading Files"
 * (discord.com/developers/docs/reference#uploading-files) — the upload limit applies to each file in a request, and an
 * interaction's `attachment_size_limit` is that limit — and Create Message's limitations
 * (discord.com/developers/docs/resources/message#create-message) — "the maximum request size when sending a message
 * is 25 MiB" (`DISCORD_LIMITS.requestBytes`), whatever the limit of one file. So a pack holds at most 10 files
 * (`DISCORD_LIMITS.filesPerMessage`) whose bytes, with `REQUEST_ROOM_BYTES` for the rest of the request, stay within
 * 25 MiB; a file over `uploadLimitBytes` (`uploadLimitOf`: Discord refuses it whatever it goes with, and it is shrunk
 * alone) is a pack of its own.
 */
export function packFiles(files: readonly OutgoingFile[], uploadLimitBytes: number): OutgoingFile[][] {
  const packBytes = DISCORD_LIMITS.requestBytes - REQUEST_ROOM_BYTES;
  const packs: OutgoingFile[][] = [];
  let last: OutgoingFile[] | undefined;
  let bytes = 0;
  for (const file of files) {
    const size = file.data.length;
    if (size > uploadLimitBytes) {
      packs.push([file]);
      last = undefined;
    } else if (last && last.length < DISCORD_LIMITS.filesPerMessage && bytes + size <= packBytes) {
      last.push(file);
      bytes += size;
    } else {
      packs.push((last = [file]));
      bytes = size;
    }
  }
  return packs;
}
