export * from './agent-aborted-error.ts';
export * from './loop-agent.ts';
export * from './request-envelope.ts';
export * from './step-runner.ts';
export * from './tool-scheduler.ts';
