/**
 * A purpose-built ExternalProcessor for tests: a script decides, for each message received, what
 * to send back (any responses, in any order, with delays) and whether to end the stream cleanly
 * or with an error. Every message received is recorded per stream.
 */
import type * as grpc from "@grpc/grpc-js";
import type { ProcessingRequest__Output } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingRequest.ts";
import type { ProcessingResponse } from "../../proto/generated/envoy/service/ext_proc/v3/ProcessingResponse.ts";
import { serveExtProc, type ExtProcServerHandle } from "./noop-extproc.ts";

/** Something the script does besides answering. */
export type ScriptAction =
  | { action: "delay"; ms: number }
  /** End the stream with status OK. */
  | { action: "close" }
  /** End the stream with an error status. */
  | { action: "error"; code: grpc.status; details?: string };

/** One step: a response to send, or an action. */
export type ScriptStep = ProcessingResponse | ScriptAction;

/** Where a message sits: which stream (0-based, in opening order) and its index in that stream. */
export interface ScriptContext {
  stream: number;
  index: number;
}

/** Decides the steps for one received message. */
export type Script = (message: ProcessingRequest__Output, context: ScriptContext) => ScriptStep[];

/** A running scripted processor. */
export interface ScriptedExtProc extends ExtProcServerHandle {
  /** Messages received, per stream. */
  streams: ProcessingRequest__Output[][];
  /** Streams Envoy half-closed (graceful close) before the server ended them. */
  halfClosedByClient: number;
  /** All messages received, in order. */
  messages(): ProcessingRequest__Output[];
}

function isAction(step: ScriptStep): step is ScriptAction {
  return "action" in step;
}

/** Starts a processor that plays `script`; steps of one stream run strictly in order. */
export async function startScriptedExtProc(script: Script): Promise<ScriptedExtProc> {
  const streams: ProcessingRequest__Output[][] = [];
  const state = { halfClosedByClient: 0 };
  const handle = await serveExtProc((call) => {
    const received: ProcessingRequest__Output[] = [];
    const stream = streams.push(received) - 1;
    let ended = false;
    let queue = Promise.resolve();
    const run = async (steps: ScriptStep[]): Promise<void> => {
      for (const step of steps) {
        if (ended) return;
        if (!isAction(step)) {
          call.write(step);
          continue;
        }
        switch (step.action) {
          case "delay":
            await new Promise((resolve) => setTimeout(resolve, step.ms));
            break;
          case "close":
            ended = true;
            call.end();
            break;
          case "error":
            ended = true;
            call.emit("error", { code: step.code, details: step.details ?? "scripted error" });
            break;
          default: {
            const unknown: never = step;
            throw new Error(`unknown script action ${JSON.stringify(unknown)}`);
          }
        }
      }
    };
    call.on("data", (message: ProcessingRequest__Output) => {
      const index = received.push(message) - 1;
      const steps = script(message, { stream, index });
      queue = queue.then(() => run(steps));
    });
    call.on("end", () => {
      if (!ended) state.halfClosedByClient += 1;
      queue = queue.then(() => {
        if (!ended) call.end();
        ended = true;
      });
    });
    call.on("error", () => undefined);
    call.on("cancelled", () => {
      ended = true;
    });
  });
  return {
    ...handle,
    streams,
    get halfClosedByClient() {
      return state.halfClosedByClient;
    },
    messages: () => streams.flat(),
  };
}
