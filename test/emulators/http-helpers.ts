/** Plumbing every provider emulator shares: body reading, lenient JSON, abort counting, closing. */
import type { IncomingMessage, Server } from "node:http";

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

/** The body as JSON, or `undefined` when it is empty or not JSON. */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    return undefined;
  }
}

/** Counts streams whose client went away, and lets tests wait for a count. */
export class AbortCounter {
  private n = 0;
  private readonly waiters = new Set<() => void>();

  get count(): number {
    return this.n;
  }

  increment(): void {
    this.n += 1;
    for (const wake of this.waiters) wake();
  }

  /** Resolves once `count` aborts were seen; rejects after `timeoutMs`. */
  waitFor(count = 1, timeoutMs = 2000): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`Timed out after ${timeoutMs} ms waiting for ${count} aborted stream(s); saw ${this.n}`));
      }, timeoutMs);
      const check = (): void => {
        if (this.n < count) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
      check();
    });
  }
}

/** Stops listening and drops open connections. */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.close((err) => (err ? reject(err) : resolve()));
    server.closeAllConnections();
  });
}
