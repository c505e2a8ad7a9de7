import type { Agent } from '../index.ts';

/**
 * Makes what a route just queued for `agent` (a message, a goal's objective) durable in its session log
 * before the client is told it was accepted: the route answers only after this resolves, and a log that
 * cannot be saved fails the request with `CHECKPOINT_FAILED` instead.
 */
export async function acknowledgeDurably(agent: Agent): Promise<void> {
  await agent.session.checkpoint('flush');
}
