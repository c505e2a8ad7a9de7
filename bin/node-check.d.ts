/** The oldest Node.js Rein runs on (package.json `engines.node` says the same). */
export declare const minimumNodeVersion: string;
/** The message for an unsupported Node.js version, or undefined when `version` is at least `minimumNodeVersion`. */
export declare function unsupportedNodeMessage(version: string): string | undefined;
