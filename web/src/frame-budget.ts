// The deadline of the current frame's budget, and a callback queued to clear it before the next frame's
// work: every caller in one frame shares one budget, however many callbacks and renders it runs.
let deadline: number | undefined;

/**
 * The `performance.now()` time by which this frame's budgeted work (inserting a streaming answer's
 * blocks) should stop: the first call in a frame starts a budget of `budgetMs`, later calls in the same
 * frame get the same deadline, so two renders in one frame (a leftover callback and a new text) do not
 * each spend a whole budget.
 */
export function frameDeadline(budgetMs: number): number {
  if (deadline === undefined) {
    deadline = performance.now() + budgetMs;
    // Frame callbacks run in the order they were requested: this one was requested before any render
    // this frame queues for the next, so the next frame's renders start a fresh budget.
    requestAnimationFrame(() => (deadline = undefined));
  }
  return deadline;
}
