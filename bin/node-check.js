// The Node.js version check of the `rein` command. Plain JavaScript without newer syntax, so that it parses
// and runs on an old Node.js before anything else of Rein loads.

/** The oldest Node.js Rein runs on (package.json `engines.node` says the same). */
export const minimumNodeVersion = '20.19.0';

/**
 * The one-line message (starting `rein:`) for an unsupported Node.js version, or undefined when `version` (e.g. `20.20.2` or
 * `v18.20.4`) is at least `minimumNodeVersion`.
 */
export function unsupportedNodeMessage(version) {
  const given = parseVersion(version);
  const minimum = parseVersion(minimumNodeVersion);
  for (let index = 0; index < 3; index += 1) {
    if (given[index] > minimum[index]) return undefined;
    if (given[index] < minimum[index]) break;
    if (index === 2) return undefined;
  }
  return (
    'rein: Rein needs Node.js ' +
    minimumNodeVersion +
    ' or newer, but this is Node.js ' +
    String(version).replace(/^v?/, 'v') +
    '. Install a current Node.js (https://nodejs.org) and run rein again.'
  );
}

function parseVersion(text) {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/.exec(String(text));
  // An unreadable version counts as too old: Rein cannot know that it would work.
  if (parts === null) return [0, 0, 0];
  return [Number(parts[1]), Number(parts[2]), Number(parts[3])];
}
