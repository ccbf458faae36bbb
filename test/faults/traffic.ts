/**
 * The fault suite's client: open-loop traffic at a steady rate (a request leaves on schedule
 * whether or not earlier ones have answered, as many independent apps would send it), or a
 * closed loop of `concurrency` workers for a fixed count. Each answer is classified by what the
 * client saw: `ok`, `limit` (a 429 from one of Gearbox's own limits, `x-gearbox-limit`), or the
 * failure's cause: `<status> <error code>`, `connection <errno>`, `timeout`, or for a stream
 * `stream cut` (ended without `[DONE]`, silently) and `stream error` (an error event or a reset).
 */
import http from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

export interface Sample {
  /** ms since the run started, when the request left. */
  sentAt: number;
  /** ms from send to the end of the answer. */
  ms: number;
  status: number;
  cause: string;
  /** `x-gearbox-route` of the answer (`cloud`, `edge`, `cache`), absent when Gearbox did not answer. */
  route?: string;
  fallback?: string;
}

export interface Request {
  path: string;
  body: Buffer;
  headers: Record<string, string>;
  stream: boolean;
}

export interface TrafficSpec {
  url: string;
  /** The i-th request (0-based). */
  request(i: number): Request;
  /** A client timeout: a request still unanswered after it counts as `timeout`. */
  timeoutMs: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });

function errorCode(body: Buffer): string {
  try {
    const parsed = JSON.parse(body.toString("utf8")) as { error?: { code?: string | null; type?: string } };
    return parsed.error?.code ?? parsed.error?.type ?? "no-error-body";
  } catch {
    return "non-json";
  }
}

function classify(status: number, headers: http.IncomingHttpHeaders, body: Buffer, stream: boolean): string {
  if (status === 429 && headers["x-gearbox-limit"] !== undefined) return "limit";
  if (status !== 200) return `${status} ${errorCode(body)}`;
  if (!stream) return body.length > 0 && body.includes('"choices"') ? "ok" : "200 empty-or-bad-body";
  const text = body.toString("utf8");
  if (/^(event: error|data: \{"error")/m.test(text)) return "stream error";
  return text.includes("data: [DONE]") ? "ok" : "stream cut";
}

export function send(base: URL, request: Request, timeoutMs: number, startedAt: number): Promise<Sample> {
  const sentAt = performance.now();
  const sample = (status: number, cause: string, headers: http.IncomingHttpHeaders = {}): Sample => {
    const route = headers["x-gearbox-route"];
    const fallback = headers["x-gearbox-fallback"];
    return {
      sentAt: sentAt - startedAt,
      ms: performance.now() - sentAt,
      status,
      cause,
      ...(typeof route === "string" && { route }),
      ...(typeof fallback === "string" && { fallback }),
    };
  };
  return new Promise((resolve) => {
    const req = http.request(
      new URL(request.path, base),
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": String(request.body.length), ...request.headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve(sample(res.statusCode ?? 0, classify(res.statusCode ?? 0, res.headers, Buffer.concat(chunks), request.stream), res.headers)),
        );
        res.on("error", () => resolve(sample(res.statusCode ?? 0, request.stream ? "stream error" : "body error", res.headers)));
        res.on("aborted", () => resolve(sample(res.statusCode ?? 0, request.stream ? "stream error" : "body error", res.headers)));
      },
    );
    req.setTimeout(timeoutMs, () => {
      req.destroy();
      resolve(sample(0, "timeout"));
    });
    req.on("error", (err: NodeJS.ErrnoException) => resolve(sample(0, `connection ${err.code ?? err.message}`)));
    req.end(request.body);
  });
}

/** Sends `rate` requests per second for `seconds`; `during(t)` is awaited alongside (the fault's script). */
export async function openLoop(
  spec: TrafficSpec & { rate: number; seconds: number },
  during: (startedAt: number) => Promise<void> = () => Promise.resolve(),
): Promise<Sample[]> {
  const base = new URL(spec.url);
  const startedAt = performance.now();
  const total = Math.round(spec.rate * spec.seconds);
  const pending: Promise<Sample>[] = [];
  const script = during(startedAt);
  for (let i = 0; i < total; i += 1) {
    const due = startedAt + (i * 1000) / spec.rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(send(base, spec.request(i), spec.timeoutMs, startedAt));
  }
  const [samples] = await Promise.all([Promise.all(pending), script]);
  return samples;
}

/** `count` requests from `concurrency` workers, each sending its next when the last ends. */
export async function closedLoop(spec: TrafficSpec & { count: number; concurrency: number }): Promise<Sample[]> {
  const base = new URL(spec.url);
  const startedAt = performance.now();
  const samples: Sample[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < spec.count) {
      const i = next++;
      samples.push(await send(base, spec.request(i), spec.timeoutMs, startedAt));
    }
  };
  await Promise.all(Array.from({ length: spec.concurrency }, worker));
  return samples;
}

/** A chat completion request whose prompt is `prompt`, for `model`, with `headers`. */
export function chat(
  model: string,
  prompt: string,
  headers: Record<string, string> = {},
  options: { stream?: boolean; temperature?: number; maxTokens?: number } = {},
): Request {
  const stream = options.stream === true;
  const body = {
    model,
    messages: [{ role: "user", content: prompt }],
    ...(stream && { stream: true }),
    ...(options.temperature !== undefined && { temperature: options.temperature }),
    ...(options.maxTokens !== undefined && { max_tokens: options.maxTokens }),
  };
  return { path: "/v1/chat/completions", body: Buffer.from(JSON.stringify(body)), headers, stream };
}
