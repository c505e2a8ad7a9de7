export * from './approval-service.ts';
export * from './tool.ts';
export * from './tool-arguments.ts';
export * from './tool-error.ts';
export * from './tool-pipeline.ts';
export * from './tool-registry.ts';
