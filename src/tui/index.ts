// The interactive terminal UI (`rein`, `rein chat`): loaded on demand by the CLI, never by `rein run`.
export * from './run-chat.ts';
export * from './chat-session.ts';
export * from './chat-screen.ts';
export * from './tui-theme.ts';
