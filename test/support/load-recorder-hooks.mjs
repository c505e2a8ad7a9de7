// The module hook of load-recorder.mjs (it runs on Node's loader thread): records, then loads as usual.
import { appendFileSync } from 'node:fs';

/** Appends the URL to the log, then lets Node load the module unchanged. */
export async function load(url, context, nextLoad) {
  if (process.env.REIN_LOAD_LOG) appendFileSync(process.env.REIN_LOAD_LOG, `${url}\n`);
  return nextLoad(url, context);
}
