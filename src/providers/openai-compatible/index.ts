export * from './openai-compatible-provider.ts';
export * from './openai-request.ts';
export * from './openai-stream.ts';
