import type { IncomingMessage, ServerResponse } from 'node:http';

// How long a connection whose body was refused unread stays open after its answer: time for a client
// still writing to read the answer and stop.
const unreadBodyGraceMs = 5_000;

/**
 * Makes `response` the connection's last answer (`Connection: close`). When the request's body is left
 * unread (a 413), the connection is not reset under a client still writing it: once the answer is sent
 * the socket is only ended, nothing more is read, and it is destroyed 5 s later unless the client closed
 * it first.
 */
export function closeAfterAnswer(request: IncomingMessage, response: ServerResponse): void {
  response.setHeader('Connection', 'close');
  // The response's socket: Node detaches it from the request and the response once the answer is sent.
  const socket = response.socket;
  if (request.complete || socket === null || socket.destroyed) return;
  request.pause();
  // Node's server destroys a `Connection: close` socket as soon as the answer is flushed. Closing a socket
  // with unread input makes the kernel reset the connection, and a client still writing its body then
  // fails its next write and drops its connection before it read the answer. So the flushed answer only
  // ends (half-closes) this socket, and the destroy waits for the grace below.
  socket.destroySoon = () => {
    if (socket.writable) socket.end();
  };
  response.once('finish', () => {
    const timer = setTimeout(() => socket.destroy(), unreadBodyGraceMs);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  });
}
