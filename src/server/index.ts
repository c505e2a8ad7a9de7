export * from './server-options.ts';
export * from './rein-server.ts';
export * from './build-web.ts';
export * from './web-paths.ts';
export * from './http-error.ts';
export type { SessionLiveState, ModelRoute } from './session-hub.ts';
export type { ModelRow } from './api-routes.ts';
