export * from './demo-provider.ts';
export * from './document-outline.ts';
export * from './demo-workspace.ts';
