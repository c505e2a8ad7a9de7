import { randomUUID } from 'node:crypto';
import { readFileSync, unlinkSync } from 'node:fs';
import { readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { SessionError } from '../session-error.ts';
import { linkIntoPlace } from './link-into-place.ts';
import { ioError, isCode } from './session-io-error.ts';

/** Who holds a session's write lock, as recorded in its lock file. */
export interface SessionLockHolder {
  pid: number;
  host: string;
  /** Identifies the holder process's start (boot id and start tick), so a reused pid is not mistaken for it. */
  processStart?: string;
  acquiredAt: number;
  token: string;
}

/** A session is open for writing elsewhere (another process, or another open in this one). */
export class SessionLockedError extends SessionError {
  /** The recorded holder, when the lock file could be read. */
  readonly holder: SessionLockHolder | undefined;
  constructor(id: string, holder: SessionLockHolder | undefined, detail?: string) {
    const who =
      holder === undefined
        ? 'another writer'
        : holder.pid === process.pid && holder.host === hostname()
          ? `this process (pid ${holder.pid} on ${holder.host})`
          : `pid ${holder.pid} on host ${holder.host}`;
    const since = holder !== undefined ? ` since ${new Date(holder.acquiredAt).toISOString()}` : '';
    super(
      'SESSION_LOCKED',
      `session ${id} is open for writing by ${who}${since}${detail !== undefined ? ` (${detail})` : ''}; ` +
        'read-only access is still possible',
    );
    this.name = 'SessionLockedError';
    this.holder = holder;
  }
}

// A lock file still empty or unreadable after this long belongs to a writer that died while creating it.
const unreadableLockGraceMs = 10_000;

// Lock files this process holds, removed on exit so a clean shutdown never leaves a stale lock.
const heldPaths = new Set<string>();
let exitHookInstalled = false;

/** An exclusive, cross-process write lock on one session: a lock file created only if absent. */
export class SessionLock {
  readonly path: string;
  readonly holder: SessionLockHolder;
  #released = false;

  private constructor(path: string, holder: SessionLockHolder) {
    this.path = path;
    this.holder = holder;
  }

  /**
   * Takes the lock at `path` for session `id`; a lock whose holder process is gone (dead pid, or a pid
   * reused by a different process) is taken over. Throws SessionLockedError when a live writer holds it.
   */
  static async acquire(path: string, id: string): Promise<SessionLock> {
    const holder: SessionLockHolder = {
      pid: process.pid,
      host: hostname(),
      acquiredAt: Date.now(),
      token: randomUUID(),
    };
    const start = processStartOf(process.pid);
    if (start !== undefined) holder.processStart = start;
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await createExclusive(path, `${JSON.stringify(holder)}\n`)) {
        installExitHook();
        heldPaths.add(path);
        return new SessionLock(path, holder);
      }
      const current = await readLock(path);
      if (current.kind === 'missing') continue;
      if (current.kind === 'held') throw new SessionLockedError(id, current.holder);
      await takeOver(path, id, current.text);
    }
    throw new SessionLockedError(id, undefined, 'the lock kept changing hands');
  }

  /** Drops the lock (only if the file is still ours). */
  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    heldPaths.delete(this.path);
    try {
      const text = await readFile(this.path, 'utf8');
      if (text.includes(this.holder.token)) await unlink(this.path);
    } catch (error) {
      if (!isCode(error, 'ENOENT')) throw error;
    }
  }
}

/** Reads who holds the lock at `path`, if anyone does (for messages and read-only displays). */
export async function readSessionLockHolder(path: string): Promise<SessionLockHolder | undefined> {
  const state = await readLock(path);
  return state.kind === 'held' ? state.holder : undefined;
}

type LockState =
  | { kind: 'missing' }
  | { kind: 'held'; holder: SessionLockHolder | undefined }
  | { kind: 'stale'; text: string };

async function readLock(path: string): Promise<LockState> {
  let text: string;
  let modified: number;
  try {
    text = await readFile(path, 'utf8');
    modified = (await stat(path)).mtimeMs;
  } catch (error) {
    if (isCode(error, 'ENOENT')) return { kind: 'missing' };
    throw ioError(path, error);
  }
  const holder = parseHolder(text);
  if (holder === undefined) {
    // A writer may be between creating the file and writing its pid; only an old unreadable lock is stale.
    return Date.now() - modified > unreadableLockGraceMs ? { kind: 'stale', text } : { kind: 'held', holder };
  }
  return isAlive(holder) ? { kind: 'held', holder } : { kind: 'stale', text };
}

async function takeOver(path: string, id: string, staleText: string): Promise<void> {
  // A short-lived second lock serializes takeovers, so two processes cannot both remove a stale lock
  // and then one of them remove the fresh lock the other just created.
  const guard = `${path}.takeover`;
  const guardHolder = { pid: process.pid, host: hostname(), acquiredAt: Date.now(), token: randomUUID() };
  if (!(await createExclusive(guard, JSON.stringify(guardHolder)))) {
    const state = await readLock(guard);
    if (state.kind === 'held')
      throw new SessionLockedError(id, state.holder, 'another process is taking it over');
    if (state.kind === 'stale') await unlinkIfUnchanged(guard, state.text);
    return;
  }
  try {
    await unlinkIfUnchanged(path, staleText);
  } finally {
    await unlink(guard).catch((error: unknown) => {
      if (!isCode(error, 'ENOENT')) throw error;
    });
  }
}

async function unlinkIfUnchanged(path: string, expected: string): Promise<void> {
  try {
    if ((await readFile(path, 'utf8')) === expected) await unlink(path);
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error;
  }
}

async function createExclusive(path: string, text: string): Promise<boolean> {
  try {
    // Linked into place whole: a reader never sees the lock without its holder (an O_EXCL create would
    // show it empty for a moment). Not synced: after a machine crash every recorded holder is dead.
    await linkIntoPlace(path, text);
    return true;
  } catch (error) {
    if (isCode(error, 'EEXIST')) return false;
    throw ioError(path, error);
  }
}

function parseHolder(text: string): SessionLockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<SessionLockHolder>;
    if (typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.token === 'string') {
      return value as SessionLockHolder;
    }
  } catch {
    // Not JSON: a lock file cut short; the caller decides by its age.
  }
  return undefined;
}

function isAlive(holder: SessionLockHolder): boolean {
  // Liveness of a process on another host cannot be checked: its lock is respected.
  if (holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    if (isCode(error, 'ESRCH')) return false;
  }
  if (holder.processStart === undefined) return true;
  const start = processStartOf(holder.pid);
  return start === undefined || start === holder.processStart;
}

let bootId: string | undefined;

/** The boot id and start tick of a process (Linux /proc); undefined where that is not available. */
function processStartOf(pid: number): string | undefined {
  try {
    bootId ??= readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime); fields are counted after the parenthesized command name, which may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const startTick = fields[19];
    return startTick !== undefined ? `${bootId}:${startTick}` : undefined;
  } catch {
    // No /proc (macOS, Windows) or the process is gone: fall back to the pid check alone.
    return undefined;
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const path of heldPaths) {
      try {
        unlinkSync(path);
      } catch {
        // Already gone, or the directory vanished: nothing left to release at exit.
      }
    }
  });
}
