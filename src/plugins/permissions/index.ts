export * from './permission-policy.ts';
export * from './permissions-plugin.ts';
export * from './shell-command.ts';
