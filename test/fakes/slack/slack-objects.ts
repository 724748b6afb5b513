/** What the fake keeps about files, messages and views, and the public shapes Slack sends of them. */

export interface FakeFile {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  filetype: string;
  /** Declared size (what Slack reports); the bytes may differ for a test of a lying client. */
  size: number;
  bytes: Buffer | undefined;
  user: string;
  url_private: string;
  url_private_download: string;
  channels: string[];
  /** `awaiting_upload` → `uploaded` (bytes received) → `shared` (completed). */
  state: 'awaiting_upload' | 'uploaded' | 'shared';
  declaredLength?: number | undefined;
  created: number;
}

export interface FakeMessageEdit {
  at: number;
  text: string;
  blocks: unknown[] | undefined;
}

export interface FakeMessage {
  channel: string;
  ts: string;
  thread_ts?: string | undefined;
  user?: string | undefined;
  bot_id?: string | undefined;
  text: string;
  blocks?: unknown[] | undefined;
  files?: FakeFile[] | undefined;
  postedAt: number;
  /** Every accepted chat.update, oldest first. */
  edits: FakeMessageEdit[];
}

export interface FakeEphemeral {
  channel: string;
  user: string;
  text: string;
  blocks?: unknown[] | undefined;
  thread_ts?: string | undefined;
  at: number;
}

export interface FakeResponse {
  id: string;
  body: Record<string, unknown>;
  at: number;
}

export interface FakeView {
  id: string;
  user: string | undefined;
  view: Record<string, unknown>;
  openedAt: number;
}

export interface ApiCall {
  method: string;
  args: Record<string, unknown>;
  at: number;
  status: number;
  ok: boolean;
  error?: string | undefined;
  /** The workspace whose token made the call (undefined when the token was refused or none was needed). */
  team?: string | undefined;
}

export interface WriteRecord {
  method: string;
  channel: string;
  at: number;
  rejected: boolean;
}

export interface DownloadRecord {
  fileId: string | undefined;
  path: string;
  authorized: boolean;
  at: number;
}

export interface ButtonRef {
  blockId: string | undefined;
  actionId: string;
  value: string | undefined;
  text: string;
}

/** A file as Slack shows it in payloads and API answers (no bytes). */
export function fileObject(file: FakeFile, teamId: string): Record<string, unknown> {
  return {
    id: file.id,
    created: file.created,
    timestamp: file.created,
    name: file.name,
    title: file.title,
    mimetype: file.mimetype,
    filetype: file.filetype,
    pretty_type: file.filetype.toUpperCase(),
    user: file.user,
    user_team: teamId,
    mode: 'hosted',
    editable: false,
    is_external: false,
    external_type: '',
    is_public: true,
    size: file.size,
    url_private: file.url_private,
    url_private_download: file.url_private_download,
    permalink: `${file.url_private}?permalink=1`,
    channels: [...file.channels],
  };
}

/** A message as Slack shows it in payloads and conversation history. */
export function messageObject(message: FakeMessage, teamId: string): Record<string, unknown> {
  const out: Record<string, unknown> = { type: 'message', ts: message.ts, text: message.text, team: teamId };
  if (message.user) out.user = message.user;
  if (message.bot_id) out.bot_id = message.bot_id;
  if (message.thread_ts) out.thread_ts = message.thread_ts;
  if (message.blocks) out.blocks = message.blocks;
  if (message.files?.length) {
    out.files = message.files.map((f) => fileObject(f, teamId));
    out.upload = true;
  }
  return out;
}

/** Every button in a message's blocks. */
export function buttonsOf(message: Pick<FakeMessage, 'blocks'>): ButtonRef[] {
  const out: ButtonRef[] = [];
  for (const block of (message.blocks ?? []) as { type?: string; block_id?: string; elements?: unknown[]; accessory?: unknown }[]) {
    const candidates = [...(block.type === 'actions' ? (block.elements ?? []) : []), ...(block.accessory ? [block.accessory] : [])];
    for (const element of candidates as { type?: string; action_id?: string; value?: string; text?: { text?: string } }[]) {
      if (element.type === 'button' && element.action_id) {
        out.push({ blockId: block.block_id, actionId: element.action_id, value: element.value, text: element.text?.text ?? '' });
      }
    }
  }
  return out;
}

/** Everything readable in a message: its text and the text of its blocks. */
export function visibleText(message: Pick<FakeMessage, 'text' | 'blocks'>): string {
  const parts = [message.text];
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) node.forEach(walk);
    else if (node && typeof node === 'object') {
      const rec = node as Record<string, unknown>;
      if (typeof rec.text === 'string') parts.push(rec.text);
      for (const [key, value] of Object.entries(rec)) if (key !== 'text' || typeof value !== 'string') walk(value);
    }
  };
  walk(message.blocks ?? []);
  return parts.join('\n');
}
