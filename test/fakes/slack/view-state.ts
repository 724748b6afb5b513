import { fileObject, type FakeFile } from './slack-objects.js';

type Rec = Record<string, unknown>;

/** What a person types or picks in a modal, by block id. */
export type ViewInputs = Record<string, string | FakeFile[] | undefined>;

/**
 * Builds `view.state.values` the way Slack does when a modal is submitted:
 * every input block gets its element's value, taken from `inputs` or else from
 * the element's initial value. A select value that is not one of its options throws.
 */
export function fillViewState(view: Rec, inputs: ViewInputs, teamId: string): Record<string, Record<string, Rec>> {
  const values: Record<string, Record<string, Rec>> = {};
  for (const raw of (view.blocks ?? []) as Rec[]) {
    if (raw.type !== 'input') continue;
    const blockId = String(raw.block_id);
    const element = (raw.element ?? {}) as Rec;
    const actionId = String(element.action_id);
    const given = inputs[blockId];
    let value: Rec;
    switch (element.type) {
      case 'plain_text_input':
        value = { type: 'plain_text_input', value: typeof given === 'string' ? given : ((element.initial_value as string | undefined) ?? null) };
        break;
      case 'number_input':
        value = { type: 'number_input', value: typeof given === 'string' ? given : ((element.initial_value as string | undefined) ?? null) };
        break;
      case 'static_select': {
        const options = (element.options ?? []) as Rec[];
        let selected = element.initial_option as Rec | undefined;
        if (typeof given === 'string') {
          selected = options.find((o) => o.value === given);
          if (!selected) throw new Error(`the select ${blockId} has no option ${given}`);
        }
        value = { type: 'static_select', selected_option: selected ?? null };
        break;
      }
      case 'file_input':
        value = { type: 'file_input', files: Array.isArray(given) ? given.map((f) => fileObject(f, teamId)) : [] };
        break;
      default:
        throw new Error(`the fake cannot fill a ${String(element.type)} element`);
    }
    values[blockId] = { [actionId]: value };
  }
  for (const key of Object.keys(inputs)) {
    if (!(key in values)) throw new Error(`the view has no input block ${key}`);
  }
  return values;
}
