/** A closed-loop HTTP load generator: `concurrency` workers, each sending its next request when the last ends. */
import http from "node:http";

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  /** Latency percentiles in ms. */
  p50: number;
  p99: number;
}

export interface LoadSpec {
  url: string;
  body: Buffer;
  headers?: Record<string, string>;
  concurrency: number;
  requests: number;
}

function once(agent: http.Agent, url: URL, spec: LoadSpec): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const req = http.request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": String(spec.body.length), ...spec.headers } },
      (res) => {
        res.on("data", () => undefined);
        res.on("end", () =>
          res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - started) / 1e6) : reject(new Error(`HTTP ${res.statusCode ?? 0}`)),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(spec.body);
  });
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.concurrency });
  const url = new URL(spec.url);
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < spec.requests) {
      next++;
      try {
        latencies.push(await once(agent, url, spec));
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, errors, seconds, rps: latencies.length / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}
