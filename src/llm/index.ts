export * from './block-assembler.ts';
export * from './llm-error.ts';
export * from './llm-request.ts';
export * from './llm-service.ts';
export * from './lossless-json.ts';
export * from './message.ts';
export * from './retry-policy.ts';
export * from './stream-chunk.ts';
