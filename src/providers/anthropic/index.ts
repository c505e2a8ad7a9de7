export * from './anthropic-provider.ts';
export * from './anthropic-request.ts';
export * from './anthropic-stream.ts';
