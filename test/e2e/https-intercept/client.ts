/**
 * One call with an official SDK left on its defaults (base URL https://<provider host>, key
 * and trust from the environment only); prints one JSON line `{ ok, text }` or `{ ok: false,
 * error, cause }`. Run by https-intercept.test.ts in a child process, because
 * NODE_EXTRA_CA_CERTS is read once, when the process starts.
 */
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";

const MODEL = process.argv[3] ?? "deepseek-chat";

async function call(sdk: string): Promise<string> {
  switch (sdk) {
    case "openai": {
      const r = await new OpenAI({ maxRetries: 0 }).chat.completions.create({ model: MODEL, messages: [{ role: "user", content: "Hello" }] });
      return r.choices[0]?.message.content ?? "";
    }
    case "anthropic": {
      const r = await new Anthropic({ maxRetries: 0 }).messages.create({ model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "Hello" }] });
      return r.content.map((b) => (b.type === "text" ? b.text : "")).join("");
    }
    case "gemini": {
      const r = await new GoogleGenAI({}).models.generateContent({ model: MODEL, contents: "Hello" });
      return r.text ?? "";
    }
    default:
      throw new Error(`unknown sdk ${sdk}`);
  }
}

function causeOf(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e instanceof Error; e = (e as { cause?: unknown }).cause)
    parts.push(`${(e as NodeJS.ErrnoException).code ?? e.name}: ${e.message}`);
  return parts.join(" <- ");
}

call(process.argv[2] ?? "").then(
  (text) => process.stdout.write(JSON.stringify({ ok: true, text }) + "\n"),
  (err: unknown) => process.stdout.write(JSON.stringify({ ok: false, error: err instanceof Error ? err.message : String(err), cause: causeOf(err) }) + "\n"),
);
