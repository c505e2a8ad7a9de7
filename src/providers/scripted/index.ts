export * from './scripted-provider.ts';
