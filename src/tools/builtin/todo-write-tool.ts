import { registerSessionEventTypes } from '../../session/index.ts';
import { defineTool } from '../tool.ts';
import type { Tool } from '../tool.ts';
import { ToolError } from '../tool-error.ts';
import type { BuiltinSettings } from './builtin-settings.ts';
import { boundForModel } from './builtin-settings.ts';

/** The state of one task on the agent's list. */
export type TodoStatus = 'pending' | 'in_progress' | 'completed';

/** One task on the agent's list. */
export interface TodoItem {
  content: string;
  status: TodoStatus;
}

declare module '../../session/session-event.ts' {
  interface SessionEventMap {
    /** The agent's whole task list after a `todo_write` call (a snapshot, not a delta). */
    'todo/write': { todos: TodoItem[] };
  }
}

registerSessionEventTypes(['todo/write']);

/** Arguments of `todo_write`. */
export interface TodoWriteArgs {
  todos: TodoItem[];
}

const marks: Record<TodoStatus, string> = { pending: '[ ]', in_progress: '[~]', completed: '[x]' };

/** `todo_write`: replaces the agent's task list with a new snapshot, recorded as a durable `todo/write`. */
export function createTodoWriteTool(settings: BuiltinSettings): Tool<TodoWriteArgs> {
  return defineTool<TodoWriteArgs>({
    name: 'todo_write',
    description:
      'Record your task list for multi-step work. Send the whole list every time (it replaces the previous ' +
      'one): each item has content and a status of pending, in_progress or completed. Keep at most one item ' +
      'in_progress, and mark items completed as soon as they are done.',
    // It changes only the agent's own plan, nothing in the workspace, so policies treat it as harmless.
    effect: 'read',
    category: 'think',
    parameters: {
      type: 'object',
      properties: {
        todos: {
          type: 'array',
          maxItems: 100,
          items: {
            type: 'object',
            properties: {
              content: { type: 'string', minLength: 1, maxLength: 2000 },
              status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] },
            },
            required: ['content', 'status'],
            additionalProperties: false,
          },
        },
      },
      required: ['todos'],
      additionalProperties: false,
    },
    paths: () => [],
    execute(args, context) {
      const active = args.todos.filter((todo) => todo.status === 'in_progress').length;
      if (active > 1) {
        throw new ToolError(
          'INVALID_TODOS',
          `${active} items are in_progress; keep at most one in progress at a time`,
        );
      }
      const todos = args.todos.map((todo) => ({ content: todo.content, status: todo.status }));
      context.session.append('todo/write', { todos });
      const done = todos.filter((todo) => todo.status === 'completed').length;
      const lines = todos.map((todo) => `${marks[todo.status]} ${todo.content}`);
      const bounded = boundForModel(
        settings,
        todos.length === 0
          ? 'The task list is now empty.'
          : `Task list updated (${done}/${todos.length} completed):\n${lines.join('\n')}`,
      );
      return {
        content: bounded.text,
        meta: { todos, ...bounded.meta },
      };
    },
  });
}
