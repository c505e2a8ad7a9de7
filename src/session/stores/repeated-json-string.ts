import { jsonString } from './compact-log-state.ts';

/**
 * `jsonString` for a field whose value mostly repeats from one event to the next (a block type, a tool
 * name, a finish kind): the last text's JSON is kept, so a repeat costs one comparison.
 */
export class RepeatedJsonString {
  #text: string | undefined;
  #json = '';

  /** The JSON of `text`, exactly `JSON.stringify(text)`. */
  of(text: string): string {
    if (text !== this.#text) {
      this.#json = jsonString(text);
      this.#text = text;
    }
    return this.#json;
  }
}
