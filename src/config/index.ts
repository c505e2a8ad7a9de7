export * from './config-error.ts';
export * from './config-keys.ts';
export * from './configured-providers.ts';
export * from './model-id.ts';
export * from './provider-keys.ts';
export * from './rein-config.ts';
export * from './mcp-config.ts';
