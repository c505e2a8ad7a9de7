import type { FakeReply, FakeScript, FakeServer } from './fake-openai-server.ts';
import { deltas, split, startFakeVendorServer } from './fake-openai-server.ts';

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

function anthropicFrames(reply: FakeReply, body: unknown): string[] {
  const model = (body as { model?: string }).model ?? 'fake-model';
  const usage = reply.usage ?? { input_tokens: 10, output_tokens: 5 };
  const { output_tokens: outputTokens, ...inputUsage } = usage;
  const frames: string[] = [
    event('message_start', {
      message: {
        id: 'msg_fake',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...inputUsage, output_tokens: 1 },
      },
    }),
    event('ping', {}),
  ];
  let index = 0;
  if (reply.redactedThinking !== undefined) {
    frames.push(
      event('content_block_start', {
        index,
        content_block: { type: 'redacted_thinking', data: reply.redactedThinking },
      }),
    );
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  if (reply.reasoning !== undefined) {
    frames.push(
      event('content_block_start', {
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      }),
    );
    for (const text of deltas(reply.reasoning)) {
      frames.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: text } }));
    }
    if (reply.signature !== undefined) {
      frames.push(
        event('content_block_delta', {
          index,
          delta: { type: 'signature_delta', signature: reply.signature },
        }),
      );
    }
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  if (reply.text !== undefined) {
    frames.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    for (const text of deltas(reply.text)) {
      frames.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }));
    }
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  for (const call of reply.toolCalls ?? []) {
    frames.push(
      event('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
      }),
    );
    for (const piece of split(call.arguments, call.pieces ?? 2)) {
      frames.push(
        event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: piece } }),
      );
    }
    frames.push(event('content_block_stop', { index }));
    index++;
  }
  if (reply.streamError !== undefined) {
    frames.push(
      event('error', {
        error: { type: reply.streamError.type ?? 'api_error', message: reply.streamError.message },
      }),
    );
    return frames;
  }
  const stop = reply.finishReason ?? ((reply.toolCalls?.length ?? 0) > 0 ? 'tool_use' : 'end_turn');
  frames.push(
    event('message_delta', {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: outputTokens ?? 0 },
    }),
  );
  frames.push(event('message_stop', {}));
  return frames;
}

function anthropicError(reply: FakeReply): unknown {
  const error = reply.error ?? { message: `HTTP ${reply.status ?? 500}` };
  return { type: 'error', error: { type: error.type ?? 'api_error', message: error.message } };
}

/**
 * Starts a loopback server speaking the Anthropic Messages streaming wire format at `{url}/v1/messages`,
 * answering each request with the next scripted reply.
 */
export function startFakeAnthropicServer(script: FakeScript = []): Promise<FakeServer> {
  return startFakeVendorServer(script, anthropicFrames, anthropicError, '');
}
