/**
 * The CPU bench's load generator, in a process of its own (its CPU is not what is measured).
 * Commands arrive over IPC; each answer is `{ done: Result }`.
 *
 * - `http`: closed-loop keep-alive HTTP/1.1 load, `concurrency` workers. Every request carries a
 *   different prompt (a counter in the user message), so Gearbox's runaway check — on by
 *   default, it answers a caller's 11th identical request from the last answer — never turns the
 *   measured path into a replay. Streams are read to the end; the first body byte's time is kept,
 *   and split at the moment the upstream read the request (its stamp in the first event): the way
 *   there (client → upstream) and the way back (upstream → the client's first byte).
 * - `extproc`: full ext_proc cycles as Envoy's filter sends them with `envoy/local-dev.yaml`'s
 *   processing mode (request headers with the configured request attributes, the buffered request
 *   body, response headers, the buffered response body; one `Process` stream per request, each
 *   message sent when the previous one is answered — Envoy waits for each answer in these modes),
 *   `concurrency` streams at a time on one HTTP/2 channel. An immediate response ends the cycle,
 *   as it ends Envoy's.
 */
import http from "node:http";
import * as grpc from "@grpc/grpc-js";
import { extProcPackage } from "../../common/envoy/protos.ts";
import type { ProcessingRequest } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import { HeaderMap } from "../../test/harness/headers.ts";
import { bodyRequest, headersRequest } from "../../test/harness/messages.ts";
import { EXT_PROC_FILTER_NAME, evaluateAttributes } from "../../test/harness/attributes.ts";
import { shippedEnvoySettings } from "../../test/support/envoy-settings.ts";
import { stampOf } from "./servers.ts";

export interface HttpRun {
  kind: "http";
  url: string;
  concurrency: number;
  requests: number;
  stream: boolean;
  headers?: Record<string, string>;
  /** Messages per request (default 2: a system prompt and the question); more make a conversation's history. */
  turns?: number;
}
export interface ExtProcRun {
  kind: "extproc";
  address: string;
  concurrency: number;
  requests: number;
  /** The upstream answer handed to the processor as the response body. */
  answer: string;
  turns?: number;
}
export type Run = HttpRun | ExtProcRun;
export interface Result {
  requests: number;
  errors: number;
  firstError: string | undefined;
  seconds: number;
  /** Per request, ms: whole request and (HTTP) first body byte. */
  latencies: number[];
  firstBytes: number[];
  /** Streams, ms: from the request's send to the upstream's read of it, and from there to the first byte. */
  there: number[];
  back: number[];
  /** ext_proc: `override_message_timeout` messages the processor sent during the run. */
  overrides: number;
}

let counter = 0;
/** `override_message_timeout` messages received (extra messages a processor sent). */
let overrides = 0;
/** A history turn of ~460 characters, as in a chat that went on for a while. */
const HISTORY = "Lorem ipsum dolor sit amet, consectetur adipiscing elit. ".repeat(8);
const body = (stream: boolean, turns = 2): Buffer =>
  Buffer.from(
    JSON.stringify({
      model: "gpt-4.1-nano",
      messages: [
        { role: "system", content: "Be brief." },
        ...Array.from({ length: turns - 2 }, (_, t) => ({ role: t % 2 ? "assistant" : "user", content: `Turn ${t}: ${HISTORY}` })),
        { role: "user", content: `Invent holiday number ${++counter} and describe it.` },
      ],
      temperature: 0.2,
      ...(stream && { stream: true }),
    }),
  );

/** One request's times, ms: whole, first byte, and (streams) the first byte's two ways. */
type Times = [total: number, first: number, there?: number, back?: number];

async function closedLoop(run: { concurrency: number; requests: number }, once: () => Promise<Times>): Promise<Result> {
  const result: Result = {
    requests: run.requests,
    errors: 0,
    firstError: undefined,
    seconds: 0,
    latencies: [],
    firstBytes: [],
    there: [],
    back: [],
    overrides: 0,
  };
  overrides = 0;
  let left = run.requests;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: run.concurrency }, async () => {
      while (left-- > 0) {
        try {
          const [total, first, there, back] = await once();
          result.latencies.push(total);
          result.firstBytes.push(first);
          if (there !== undefined && back !== undefined) {
            result.there.push(there);
            result.back.push(back);
          }
        } catch (err) {
          result.errors++;
          result.firstError ??= String(err);
        }
      }
    }),
  );
  result.seconds = (performance.now() - started) / 1000;
  result.overrides = overrides;
  return result;
}

const agents = new Map<number, http.Agent>();
function httpRun(run: HttpRun): Promise<Result> {
  const url = new URL(run.url);
  let agent = agents.get(run.concurrency);
  if (!agent) agents.set(run.concurrency, (agent = new http.Agent({ keepAlive: true, maxSockets: run.concurrency })));
  const ms = (ns: bigint) => Number(ns) / 1e6;
  const once = (): Promise<Times> =>
    new Promise((resolve, reject) => {
      const payload = body(run.stream, run.turns);
      const t0 = process.hrtime.bigint();
      const req = http.request(
        url,
        { method: "POST", agent, headers: { "content-type": "application/json", "content-length": String(payload.length), ...run.headers } },
        (res) => {
          let first = 0n;
          let stamp: bigint | undefined;
          let text = "";
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => {
            if (first === 0n) first = process.hrtime.bigint();
            // Kept only while needed: an error's text, or a stream's first bytes until they gave the stamp.
            if (text.length < 500 && (res.statusCode !== 200 || (run.stream && stamp === undefined))) {
              text += chunk;
              if (run.stream) stamp ??= stampOf(text);
            }
          });
          res.on("end", () => {
            if (res.statusCode !== 200) return reject(new Error(`HTTP ${res.statusCode ?? 0}: ${text.slice(0, 300)}`));
            const total = ms(process.hrtime.bigint() - t0);
            resolve(stamp === undefined ? [total, ms(first - t0)] : [total, ms(first - t0), ms(stamp - t0), ms(first - stamp)]);
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  return closedLoop(run, once);
}

const clients = new Map<string, InstanceType<ReturnType<typeof extProcPackage>["envoy"]["service"]["ext_proc"]["v3"]["ExternalProcessor"]>>();
function extProcRun(run: ExtProcRun): Promise<Result> {
  const settings = shippedEnvoySettings();
  const attributeNames = settings.extProc.requestAttributes ?? [];
  let client = clients.get(run.address);
  if (!client) {
    const ExternalProcessor = extProcPackage().envoy.service.ext_proc.v3.ExternalProcessor;
    clients.set(run.address, (client = new ExternalProcessor(run.address, grpc.credentials.createInsecure())));
  }
  const answer = Buffer.from(run.answer);
  const responseHead = HeaderMap.of([
    [":status", "200"],
    ["content-type", "application/json"],
    ["content-length", String(answer.length)],
  ]);
  const processor = client;
  const once = (): Promise<Times> =>
    new Promise((resolve, reject) => {
      const payload = body(false, run.turns);
      const t0 = performance.now();
      const call = processor.Process();
      const requestHead = HeaderMap.of([
        [":authority", "api.openai.com"],
        [":path", "/v1/chat/completions"],
        [":method", "POST"],
        [":scheme", "http"],
        ["content-type", "application/json"],
        ["content-length", String(payload.length)],
        ["x-forwarded-proto", "http"],
        ["x-request-id", `bench-${counter}`],
      ]);
      const first: ProcessingRequest = {
        ...headersRequest("request", requestHead, false),
        attributes: { [EXT_PROC_FILTER_NAME]: evaluateAttributes(attributeNames, { remoteAddress: "10.1.2.3", remotePort: 40000, peerUriSan: undefined }) },
      };
      const script: ProcessingRequest[] = [
        first,
        bodyRequest("request", payload, true),
        headersRequest("response", responseHead, false),
        bodyRequest("response", answer, true),
      ];
      let step = 0;
      const next = () => {
        const message = script[step++];
        if (message) call.write(message);
        else call.end();
      };
      call.on("data", (response: ProcessingResponse__Output) => {
        // Envoy only extends its message timer on this one; the answer to the message follows.
        if (response.override_message_timeout) return void overrides++;
        if (response.immediate_response) {
          call.end();
          return;
        }
        next();
      });
      call.on("status", (status: grpc.StatusObject) => {
        if (status.code === grpc.status.OK) resolve([performance.now() - t0, 0]);
        else reject(new Error(`grpc ${status.code}: ${status.details}`));
      });
      call.on("error", () => undefined); // the status event reports it
      next();
    });
  return closedLoop(run, once);
}

process.on("message", (run: Run) => {
  void (run.kind === "http" ? httpRun(run) : extProcRun(run)).then((done) => process.send?.({ done }));
});
process.send?.({ ready: {} });
