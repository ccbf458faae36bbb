/**
 * `GET /metrics` (Prometheus text format) on port 9464 (`GEARBOX_METRICS_PORT`), from one or more
 * registries (`gearbox serve` merges the gateway's and the control plane's); `/healthz` too.
 */
import http from "node:http";
import { Registry } from "prom-client";
import { listenHttp, type Listening } from "../http/listen.ts";

export type MetricsServer = Listening;

export async function startMetricsServer(registries: readonly Registry[], port: number, host = "0.0.0.0"): Promise<MetricsServer> {
  const registry = registries.length === 1 && registries[0] ? registries[0] : Registry.merge([...registries]);
  const server = http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/metrics") {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { "content-type": registry.contentType });
          res.end(text);
        },
        (err: unknown) => {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end(`metrics collection failed: ${(err as Error).message}`);
        },
      );
      return;
    }
    if (req.method === "GET" && path === "/healthz") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end('{"status":"ok"}');
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found: try GET /metrics\n");
  });
  return listenHttp(server, port, host);
}
