/**
 * The Block Kit limits Slack enforces (as documented), so a message or view
 * the real Slack would refuse is refused here too. Returns a reason or null.
 */

type Rec = Record<string, unknown>;

const MAX_MESSAGE_BLOCKS = 50;
const MAX_VIEW_BLOCKS = 100;
const MAX_SECTION_TEXT = 3000;
const MAX_BUTTON_VALUE = 2000;
const MAX_ACTION_ID = 255;
const MAX_BLOCK_ID = 255;
const MAX_BUTTON_TEXT = 75;
const MAX_ACTIONS_ELEMENTS = 25;
const MAX_CONTEXT_ELEMENTS = 10;
const MAX_VIEW_TITLE = 24;
const MAX_PRIVATE_METADATA = 3000;
const MAX_FILE_INPUT_FILES = 10;
const MAX_PLAIN_TEXT_INPUT = 3000;
const MAX_SELECT_OPTIONS = 100;
const MAX_ALT_TEXT = 2000;
const MAX_HEADER_TEXT = 150;

const hasImageSource = (image: Rec): boolean => {
  const file = image.slack_file as Rec | undefined;
  return typeof image.image_url === 'string' || (!!file && (typeof file.id === 'string' || typeof file.url === 'string'));
};

const textOf = (value: unknown): string | undefined =>
  value && typeof value === 'object' && typeof (value as Rec).text === 'string' ? ((value as Rec).text as string) : undefined;

function checkElement(element: Rec, actionIds: Set<string>): string | null {
  const actionId = element.action_id;
  if (typeof actionId === 'string') {
    if (actionId.length > MAX_ACTION_ID) return `action_id longer than ${MAX_ACTION_ID}`;
    if (actionIds.has(actionId)) return `duplicate action_id ${actionId}`;
    actionIds.add(actionId);
  }
  switch (element.type) {
    case 'button': {
      const text = textOf(element.text);
      if (!text) return 'button without text';
      if (text.length > MAX_BUTTON_TEXT) return `button text longer than ${MAX_BUTTON_TEXT}`;
      if (typeof element.value === 'string' && element.value.length > MAX_BUTTON_VALUE) return `button value longer than ${MAX_BUTTON_VALUE}`;
      return null;
    }
    case 'static_select': {
      const options = element.options;
      if (!Array.isArray(options) || options.length === 0 || options.length > MAX_SELECT_OPTIONS) return 'static_select needs 1 to 100 options';
      return null;
    }
    case 'plain_text_input': {
      const max = element.max_length;
      if (typeof max === 'number' && max > MAX_PLAIN_TEXT_INPUT) return `plain_text_input max_length above ${MAX_PLAIN_TEXT_INPUT}`;
      return null;
    }
    case 'image': {
      // An image element shows a public URL or a file in Slack (`slack_file`: `id` or `url`), with alt text.
      if (typeof element.alt_text !== 'string' || element.alt_text.length === 0 || element.alt_text.length > MAX_ALT_TEXT) return 'image without alt_text (1 to 2000 characters)';
      if (!hasImageSource(element)) return 'image needs image_url or slack_file {id|url}';
      return null;
    }
    case 'file_input': {
      const max = element.max_files;
      if (typeof max === 'number' && (max < 1 || max > MAX_FILE_INPUT_FILES)) return `file_input max_files must be 1 to ${MAX_FILE_INPUT_FILES}`;
      return null;
    }
    default:
      return null;
  }
}

export function checkBlocks(blocks: unknown, where: 'message' | 'view'): string | null {
  if (blocks === undefined) return null;
  if (!Array.isArray(blocks)) return 'blocks must be a list';
  const max = where === 'message' ? MAX_MESSAGE_BLOCKS : MAX_VIEW_BLOCKS;
  if (blocks.length > max) return `more than ${max} blocks`;
  const blockIds = new Set<string>();
  for (const raw of blocks) {
    if (!raw || typeof raw !== 'object') return 'a block is not an object';
    const block = raw as Rec;
    // An action_id must be unique within its block.
    const actionIds = new Set<string>();
    if (typeof block.block_id === 'string') {
      if (block.block_id.length > MAX_BLOCK_ID) return `block_id longer than ${MAX_BLOCK_ID}`;
      if (blockIds.has(block.block_id)) return `duplicate block_id ${block.block_id}`;
      blockIds.add(block.block_id);
    }
    switch (block.type) {
      case 'section': {
        const text = textOf(block.text);
        if (text !== undefined && text.length > MAX_SECTION_TEXT) return `section text longer than ${MAX_SECTION_TEXT}`;
        if (text === undefined && !Array.isArray(block.fields)) return 'section without text or fields';
        if (block.accessory) {
          const reason = checkElement(block.accessory as Rec, actionIds);
          if (reason) return reason;
        }
        break;
      }
      case 'context': {
        const elements = block.elements;
        if (!Array.isArray(elements) || elements.length === 0 || elements.length > MAX_CONTEXT_ELEMENTS) return 'context needs 1 to 10 elements';
        break;
      }
      case 'actions': {
        const elements = block.elements;
        if (!Array.isArray(elements) || elements.length === 0 || elements.length > MAX_ACTIONS_ELEMENTS) return 'actions needs 1 to 25 elements';
        for (const element of elements as Rec[]) {
          const reason = checkElement(element, actionIds);
          if (reason) return reason;
        }
        break;
      }
      case 'input': {
        if (where !== 'view') return 'input blocks belong in views';
        if (!textOf(block.label)) return 'input block without label';
        const reason = checkElement((block.element ?? {}) as Rec, actionIds);
        if (reason) return reason;
        break;
      }
      case 'image':
        if (typeof block.alt_text !== 'string' || block.alt_text.length === 0 || block.alt_text.length > MAX_ALT_TEXT) return 'image block without alt_text (1 to 2000 characters)';
        if (!hasImageSource(block)) return 'image block needs image_url or slack_file {id|url}';
        break;
      case 'header': {
        const text = textOf(block.text);
        if (!text || (block.text as Rec).type !== 'plain_text') return 'header needs plain_text';
        if (text.length > MAX_HEADER_TEXT) return `header text longer than ${MAX_HEADER_TEXT}`;
        break;
      }
      case 'divider':
      case 'rich_text':
        break;
      default:
        return `unknown block type ${String(block.type)}`;
    }
  }
  return null;
}

export function checkView(view: unknown): string | null {
  if (!view || typeof view !== 'object') return 'view must be an object';
  const v = view as Rec;
  if (v.type === 'home') {
    if (typeof v.private_metadata === 'string' && v.private_metadata.length > MAX_PRIVATE_METADATA) return `private_metadata longer than ${MAX_PRIVATE_METADATA}`;
    return checkBlocks(v.blocks, 'view');
  }
  if (v.type !== 'modal') return 'a view is a modal or a home tab';
  for (const key of ['title', 'submit', 'close'] as const) {
    const text = textOf(v[key]);
    if (key === 'title' && !text) return 'a modal needs a title';
    if (text !== undefined && text.length > MAX_VIEW_TITLE) return `${key} longer than ${MAX_VIEW_TITLE}`;
  }
  if (typeof v.private_metadata === 'string' && v.private_metadata.length > MAX_PRIVATE_METADATA) {
    return `private_metadata longer than ${MAX_PRIVATE_METADATA}`;
  }
  return checkBlocks(v.blocks, 'view');
}
