/**
 * What a Gearbox HTTP server answers a request Node's parser refuses (not HTTP/1.1, headers over
 * the limit, both `content-length` and `transfer-encoding`, a request that never finished):
 * the status Node would send (431, 408, otherwise 400), with an OpenAI-shaped JSON body saying
 * what was wrong, instead of Node's bare status line. The parser's reason is a fixed text of
 * llhttp's and quotes nothing of the request. As Node does, nothing is written on a connection
 * whose response is being written, and the connection is closed after the answer.
 */
import http from "node:http";
import type { Duplex } from "node:stream";

interface ParserError extends Error {
  code?: string;
  reason?: string;
}

function answerFor(err: ParserError): { status: number; message: string } {
  if (err.code === "HPE_HEADER_OVERFLOW") return { status: 431, message: `The request's headers exceed the server's limit of ${http.maxHeaderSize} bytes.` };
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, message: "The request was not received in time." };
  const reason = typeof err.reason === "string" && err.reason.length > 0 && err.reason.length <= 200 ? `: ${err.reason}` : "";
  return { status: 400, message: `The request is not valid HTTP/1.1${reason}.` };
}

/** The bytes answering `err`: a complete HTTP/1.1 response that closes the connection. */
export function malformedHttpResponse(err: ParserError): Buffer {
  const { status, message } = answerFor(err);
  const code = status === 431 ? "headers_too_large" : status === 408 ? "request_timeout" : "malformed_http";
  const body = JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } });
  return Buffer.from(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? "Bad Request"}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** Answers `server`'s malformed requests with `malformedHttpResponse`. */
export function answerMalformedHttp(server: http.Server): void {
  server.on("clientError", (err: ParserError, socket: Duplex) => {
    const response = (socket as Duplex & { _httpMessage?: http.ServerResponse })._httpMessage;
    // A response that has started and not ended would be corrupted by ours; one that has ended is
    // already on the socket ahead of it (a pipelined request after a served one).
    if (err.code === "ECONNRESET" || !socket.writable || (response?.headersSent === true && !response.writableEnded)) {
      socket.destroy();
      return;
    }
    socket.end(malformedHttpResponse(err), () => socket.destroy());
  });
}
