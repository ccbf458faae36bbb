/**
 * The demo's only fake: a stand-in for a cloud provider on 127.0.0.1 that answers
 * `POST /v1/chat/completions` like OpenAI (JSON or SSE) with a canned text that says what it is,
 * and usage counted at about four characters a token, so Gearbox prices it like a real
 * `gpt-4o-mini` answer. It checks the bearer key Gearbox injects (401 otherwise, as OpenAI does).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export const STAND_IN_TEXT = "[cloud stand-in] Canned answer: no real model was called and no key left this machine.";

export interface CloudStandIn {
  /** `http://127.0.0.1:<port>/v1`: a provider's `base_url`. */
  baseUrl: string;
  /** Chat calls answered. */
  readonly calls: number;
  close(): Promise<void>;
}

const tokensOf = (text: string): number => Math.max(1, Math.ceil(text.length / 4));

function promptText(body: unknown): string {
  const messages = (body as { messages?: { content?: unknown }[] } | null)?.messages;
  return Array.isArray(messages) ? messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? ""))).join("\n") : "";
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  res.writeHead(status, { "content-type": "application/json", "content-length": bytes.length }).end(bytes);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    return undefined;
  }
}

export async function startCloudStandIn(apiKey: string): Promise<CloudStandIn> {
  let calls = 0;
  const server = createServer((req, res) => {
    void (async () => {
      const path = (req.url ?? "").split("?")[0];
      if (req.method !== "POST" || path !== "/v1/chat/completions")
        return send(res, 404, {
          error: {
            message: `The stand-in serves POST /v1/chat/completions only, not ${req.method} ${path}.`,
            type: "invalid_request_error",
            code: "unknown_url",
          },
        });
      if (req.headers.authorization !== `Bearer ${apiKey}`)
        return send(res, 401, { error: { message: "Incorrect API key provided.", type: "invalid_request_error", code: "invalid_api_key" } });
      const body = await readJson(req);
      if (body === undefined) return send(res, 400, { error: { message: "The body is not JSON.", type: "invalid_request_error", code: "invalid_json" } });
      calls++;
      const asked = (body as { model?: unknown }).model;
      const model = typeof asked === "string" ? asked : "gpt-4o-mini";
      const usage = { prompt_tokens: tokensOf(promptText(body)), completion_tokens: tokensOf(STAND_IN_TEXT), total_tokens: 0 };
      usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
      const id = `chatcmpl-standin${calls}`;
      const created = Math.floor(Date.now() / 1000);
      if ((body as { stream?: unknown }).stream === true) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const chunk = (delta: unknown, finish: string | null, extra = {}): string =>
          `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;
        res.write(chunk({ role: "assistant", content: STAND_IN_TEXT }, null));
        res.write(chunk({}, "stop", { usage }));
        return res.end("data: [DONE]\n\n");
      }
      send(res, 200, {
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{ index: 0, message: { role: "assistant", content: STAND_IN_TEXT }, finish_reason: "stop" }],
        usage,
      });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get calls() {
      return calls;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
