// A deliberately badly behaved MCP stdio server for tests, speaking raw JSON-RPC (no SDK).
// argv[2] is a control file: {"mode": "ok" | "hang-initialize"}, read at every launch; each launch
// appends a line to `${control}.launches`, each call its tool name to `${control}.calls`, and each
// cancellation it hears to `${control}.cancelled`.
import { appendFileSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const control = process.argv[2];
const settings = JSON.parse(readFileSync(control, 'utf8'));
appendFileSync(`${control}.launches`, `${process.pid}\n`);
process.stderr.write(`hostile server ${process.pid} starting in mode ${settings.mode}\n`);

const tools = [
  {
    name: 'pid',
    description: 'Returns the process id',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'crash',
    description: 'Exits in the middle of the call',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'garbage',
    description: 'Answers with bytes that are not JSON-RPC',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'add_tool',
    description: 'Adds the tool "extra" and announces the change',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'wait',
    description: 'Waits until cancelled',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'hold',
    description: 'Waits until cancelled, with no hints: a call that may change the world',
    inputSchema: { type: 'object', properties: {} },
  },
  {
    name: 'broken_schema',
    description: 'Has an input schema that is not valid JSON Schema',
    inputSchema: { type: 'object', properties: { x: { type: 'no-such-type' } } },
  },
  { name: 'fails', description: 'Reports a tool error', inputSchema: { type: 'object', properties: {} } },
  {
    name: 'large',
    description: 'Answers with 11 MiB of text: more than the SDK reads from stdio by default',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'huge',
    description: 'Answers with 33 MiB of text: more than Rein reads from stdio in one message',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
  {
    name: 'images',
    description: 'Answers with one image a vendor takes and one it does not',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
  },
];

// A 1×1 PNG and an SVG, a type no vendor takes as image input. (Data that is not base64 never reaches
// Rein: the SDK refuses the whole result.)
const tinyPng =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const imageContent = [
  { type: 'text', text: 'two images' },
  { type: 'image', mimeType: 'image/png', data: tinyPng },
  { type: 'image', mimeType: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') },
];

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const text = (value) => ({ content: [{ type: 'text', text: value }] });

const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  const message = JSON.parse(line);
  if (message.method === 'initialize') {
    if (settings.mode === 'hang-initialize') {
      process.stderr.write('hostile server: ignoring initialize\n');
      return;
    }
    send({
      id: message.id,
      result: {
        protocolVersion: message.params.protocolVersion,
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: 'hostile', version: '1.0.0' },
      },
    });
    return;
  }
  if (message.method === 'notifications/cancelled') {
    appendFileSync(`${control}.cancelled`, `${message.params.requestId}\n`);
    return;
  }
  if (message.method === 'tools/list') {
    send({ id: message.id, result: { tools } });
    return;
  }
  if (message.method !== 'tools/call') {
    if (message.id !== undefined) send({ id: message.id, result: {} });
    return;
  }
  appendFileSync(`${control}.calls`, `${message.params.name}\n`);
  switch (message.params.name) {
    case 'pid':
      send({ id: message.id, result: text(String(process.pid)) });
      return;
    case 'crash':
      process.stderr.write('hostile server: crashing on purpose\n', () => process.exit(3));
      return;
    case 'garbage':
      process.stdout.write('this is not JSON-RPC at all\n');
      return;
    case 'add_tool':
      tools.push({
        name: 'extra',
        description: 'Appeared later',
        inputSchema: { type: 'object', properties: {} },
      });
      send({ method: 'notifications/tools/list_changed' });
      send({ id: message.id, result: text('added') });
      return;
    case 'extra':
      send({ id: message.id, result: text('extra ran') });
      return;
    case 'wait':
    case 'hold':
      return;
    case 'large':
      send({ id: message.id, result: text('x'.repeat(11 * 1_048_576)) });
      return;
    case 'huge':
      send({ id: message.id, result: text('x'.repeat(33 * 1_048_576)) });
      return;
    case 'images':
      send({ id: message.id, result: { content: imageContent } });
      return;
    case 'fails':
      send({ id: message.id, result: { content: [{ type: 'text', text: 'it went wrong' }], isError: true } });
      return;
    default:
      send({ id: message.id, error: { code: -32602, message: `no tool ${message.params.name}` } });
  }
});
