import { registerSessionEventTypes } from '../../session/index.ts';

declare module '../../session/session-event.ts' {
  interface SessionEventMap {
    'guard/stopped': {
      turn: number;
      /** The repeated call's fingerprint (name plus a hash of its canonical arguments). */
      fingerprint: string;
      /** Identical calls counted in the turn. */
      count: number;
      name: string;
      /** The explanation shown to the user. */
      message: string;
    };
  }
}

registerSessionEventTypes(['guard/stopped']);
