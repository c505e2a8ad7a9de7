export * from './event-stream-request.ts';
export * from './http-failure.ts';
export * from './base-url.ts';
export * from './stream-event-json.ts';
