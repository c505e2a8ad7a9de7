import { describe, expect, it } from 'vitest';
import type { ImageBlock, LlmRequest, Message } from '../../src/index.ts';
import { Session, createUserMessage, imageReadyRequest, isMarkedImageFree } from '../../src/internal.ts';

// A 1×1 transparent PNG.
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const image: ImageBlock = { type: 'image', mediaType: 'image/png', data: png };

function session(): Session {
  return new Session({ header: { version: 0, id: 's1', createdAt: 0 } });
}

function requestOver(messages: readonly Message[]): LlmRequest {
  return { provider: 'p', model: 'text-only', messages, sessionId: 's1', purpose: 'turn' };
}

// The request a text-only model gets, compared with the same request over an unmarked copy of its
// history (which takes the full scan): the derived history's image count must agree with that scan.
function shapedBothWays(messages: readonly Message[]): [LlmRequest, LlmRequest] {
  return [
    imageReadyRequest(requestOver(messages), undefined),
    imageReadyRequest(requestOver([...messages]), undefined),
  ];
}

describe('derived history: the image-free mark agrees with a full scan', () => {
  it('passes an image-free history through uncopied, as the full scan does', () => {
    const log = session();
    log.append('user/message', createUserMessage('one'), { surfaceOp: 'append' });
    log.append('user/message', createUserMessage('two'), { surfaceOp: 'append' });
    const history = log.derivedMessages();
    const request = requestOver(history);
    expect(imageReadyRequest(request, undefined)).toBe(request);
    const [marked, scanned] = shapedBothWays(history);
    expect(marked.messages).toEqual(scanned.messages);
  });

  it('still notes an older image once one is on the surface, and again after a replacement', () => {
    const log = session();
    log.append('user/message', createUserMessage('text first'), { surfaceOp: 'append' });
    const imageFree = log.derivedMessages();
    log.append('user/message', createUserMessage([{ type: 'text', text: 'look' }, image]), {
      surfaceOp: 'append',
    });
    log.append('user/message', createUserMessage('and now text'), { surfaceOp: 'append' });
    const withImage = log.derivedMessages();
    // The earlier snapshot stays image-free: the new messages went into a new snapshot.
    expect(imageReadyRequest(requestOver(imageFree), undefined).messages).toBe(imageFree);
    const [marked, scanned] = shapedBothWays(withImage);
    expect(marked.messages).not.toBe(withImage);
    expect(marked.messages).toEqual(scanned.messages);
    expect(JSON.stringify(marked.messages)).toContain('not shown: this model does not accept images');
    // A replacement rebuilds the derivation: the image (seq 1) is summarized away, then a new one arrives.
    log.append('user/message', createUserMessage('summary'), {
      surfaceOp: { op: 'replace', start: 0, end: 1 },
      sourceEventSeqs: [0, 1],
    });
    const summarized = log.derivedMessages();
    expect(imageReadyRequest(requestOver(summarized), undefined).messages).toBe(summarized);
    log.append('user/message', createUserMessage([image]), { surfaceOp: 'append' });
    log.append('user/message', createUserMessage('text after'), { surfaceOp: 'append' });
    const [again, againScanned] = shapedBothWays(log.derivedMessages());
    expect(again.messages).toEqual(againScanned.messages);
    expect(JSON.stringify(again.messages)).toContain('not shown: this model does not accept images');
  });

  it('keeps the mark out of the history as data: no enumerable key, not serialized, not copied', () => {
    const log = session();
    log.append('user/message', createUserMessage('one'), { surfaceOp: 'append' });
    const history = log.derivedMessages();
    expect(isMarkedImageFree(history)).toBe(true);
    expect(Object.isFrozen(history)).toBe(true);
    // An enumerable symbol would be copied by object spread and compared by deep equality.
    const enumerableSymbols = Object.getOwnPropertySymbols(history).filter((symbol) =>
      Object.prototype.propertyIsEnumerable.call(history, symbol),
    );
    expect(enumerableSymbols).toEqual([]);
    expect(Object.keys(history)).toEqual(['0']);
    expect(JSON.stringify(history)).toBe(JSON.stringify([...history]));
    expect(isMarkedImageFree([...history])).toBe(false);
    expect(isMarkedImageFree(history.slice())).toBe(false);
  });
});
