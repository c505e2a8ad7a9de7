// Rein as an Agent Client Protocol agent (`rein acp`): editors drive sessions over stdio.
export * from './acp-agent.ts';
