/**
 * A cloud stand-in that answers chat calls by quoting the last user message (as a model asked to
 * repeat what it was told would), in the shape of the recorded OpenAI fixtures: JSON, a stream cut
 * inside the first placeholder (so no chunk carries it whole), or a tool call when tools were
 * offered. Keeps every body it got: what the cloud saw.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface Echo {
  url: string;
  bodies: string[];
  close(): Promise<void>;
}

/** Answers chat calls by quoting the last user message: as JSON, as a stream cut mid-placeholder, or as a tool call. */
export async function startEcho(): Promise<Echo> {
  const bodies: string[] = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (c: Buffer) => parts.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(parts).toString();
      bodies.push(raw);
      const body = JSON.parse(raw) as { stream?: boolean; tools?: unknown[]; messages: { role: string; content: string }[] };
      const said = body.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
      const base = { id: "chatcmpl-echo", created: 1_700_000_000, model: "gpt-4.1-nano-2025-04-14", system_fingerprint: "fp_echo" };
      const usage = { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 };
      if (body.stream) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        const text = `You said: ${said}`;
        // Cut inside the first placeholder, so no chunk carries it whole.
        const lt = text.indexOf("<");
        const cuts = lt < 0 ? [text] : [text.slice(0, lt + 3), text.slice(lt + 3, lt + 9), text.slice(lt + 9)];
        const chunk = (delta: unknown, finish: string | null = null) =>
          `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
        res.write(chunk({ role: "assistant", content: "", refusal: null }));
        for (const c of cuts) res.write(chunk({ content: c }));
        res.write(chunk({}, "stop"));
        res.write(`data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", choices: [], usage })}\n\n`);
        res.end("data: [DONE]\n\n");
        return;
      }
      const message = body.tools?.length
        ? {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "call_1", type: "function", function: { name: "notify", arguments: JSON.stringify({ to: said.split(" ").at(-1) }) } }],
          }
        : { role: "assistant", content: `You said: ${said}`, refusal: null };
      const answer = {
        ...base,
        object: "chat.completion",
        choices: [{ index: 0, message, logprobs: null, finish_reason: body.tools?.length ? "tool_calls" : "stop" }],
        usage,
      };
      const out = JSON.stringify(answer);
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(out)) });
      res.end(out);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, bodies, close: () => new Promise((resolve) => server.close(() => resolve())) };
}
