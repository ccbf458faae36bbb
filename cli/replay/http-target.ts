/** The front door (or any OpenAI-compatible URL) as a replay target, over keep-alive HTTP/1.1. */
import http from "node:http";
import https from "node:https";
import type { Target, TargetRequest, TargetResponse } from "./target.ts";

export function httpTarget(baseUrl: string, options: { sockets: number; timeoutMs: number }): Target {
  const base = new URL(baseUrl);
  const secure = base.protocol === "https:";
  const agent = secure ? new https.Agent({ keepAlive: true, maxSockets: options.sockets }) : new http.Agent({ keepAlive: true, maxSockets: options.sockets });
  const prefix = base.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
  return {
    kind: "front_door",
    send(request: TargetRequest): Promise<TargetResponse> {
      const started = performance.now();
      return new Promise((resolve) => {
        let first: number | undefined;
        const failed = (error: string) =>
          resolve({ status: 0, headers: {}, body: Buffer.alloc(0), latencyMs: performance.now() - started, ttftMs: undefined, error });
        const req = (secure ? https : http).request(
          {
            agent,
            protocol: base.protocol,
            hostname: base.hostname,
            port: base.port,
            method: "POST",
            path: prefix + request.path,
            headers: { ...request.headers, "content-length": String(request.body.length) },
            timeout: options.timeoutMs,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => {
              first ??= performance.now();
              chunks.push(c);
            });
            res.on("end", () => {
              const headers: Record<string, string> = {};
              for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? (v[0] ?? "") : v;
              resolve({
                status: res.statusCode ?? 0,
                headers,
                body: Buffer.concat(chunks),
                latencyMs: performance.now() - started,
                ttftMs: first === undefined ? undefined : first - started,
              });
            });
            res.on("error", (err) => failed(`response: ${err.message}`));
          },
        );
        req.on("timeout", () => req.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
        req.on("error", (err: NodeJS.ErrnoException) => failed(err.code ? `${err.code} ${err.message}` : err.message));
        req.end(request.body);
      });
    },
    close() {
      agent.destroy();
      return Promise.resolve();
    },
  };
}
