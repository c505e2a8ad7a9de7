import { readFileSync, readdirSync } from 'node:fs';

/**
 * The pids of a process group's members that are still alive (zombies count as dead). Reads `/proc`
 * where it exists; elsewhere it can only tell whether the group has any member at all.
 */
export function livingGroupMembers(groupId: number): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    // No /proc (not Linux): fall back to asking the kernel whether the group still exists.
    return groupExists(groupId) ? [groupId] : [];
  }
  const living: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      // The process ended between listing and reading: it is not alive.
      continue;
    }
    // Fields after the parenthesized command name: state, ppid, pgrp, ...
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) === groupId && fields[0] !== 'Z' && fields[0] !== 'X') living.push(Number(name));
  }
  return living;
}

function groupExists(groupId: number): boolean {
  try {
    process.kill(-groupId, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends a signal to every member of a process group; a group already gone is not an error. */
export function signalGroup(groupId: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-groupId, signal);
  } catch (error) {
    // ESRCH: the group has no members left, which is what the caller wants.
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** Waits until no member of the group is alive, or `timeoutMs` passes; true when the group is gone. */
export async function waitForGroupExit(groupId: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (livingGroupMembers(groupId).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Ends a whole process group: SIGTERM, a grace period for clean exits, then SIGKILL for whatever is
 * left; resolves once no member is alive (or the kernel keeps one past the final wait).
 */
export async function terminateGroup(groupId: number, graceMs: number): Promise<boolean> {
  signalGroup(groupId, 'SIGTERM');
  if (await waitForGroupExit(groupId, graceMs)) return true;
  signalGroup(groupId, 'SIGKILL');
  return waitForGroupExit(groupId, 5_000);
}
