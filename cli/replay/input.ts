/**
 * A traffic file's lines as requests to send. One JSON object per line, in one of these shapes:
 *
 * - a bare request body: an OpenAI chat request (`{"model", "messages", …}`), or an Anthropic
 *   Messages request with `--format anthropic`;
 * - a wrapped request: `{"body": {…}, "tenant"?: "acme", "headers"?: {"x-gearbox-route": "edge"},
 *   "timestamp"?: "2025-06-01T10:00:00Z" | epoch ms, "endpoint"?: "/v1/chat/completions" | "/v1/messages"}`;
 * - a ShareGPT conversation: `{"conversations": [{"from": "system"|"human"|"gpt", "value": "…"}]}`,
 *   sent as an OpenAI chat request of the turns up to the last human one (model: `--model`).
 *
 * A line that is none of these is an `InputProblem` with its reason; the replay reports it and
 * goes on.
 */
export type InputFormat = "openai" | "anthropic";
export const CHAT_PATH = "/v1/chat/completions";
export const MESSAGES_PATH = "/v1/messages";

export interface ReplayRequest {
  /** 1-based line number in the traffic file. */
  line: number;
  path: typeof CHAT_PATH | typeof MESSAGES_PATH;
  body: Record<string, unknown>;
  model: string;
  stream: boolean;
  tenant: string | undefined;
  headers: Record<string, string>;
  /** Epoch ms, when the line has one. */
  timestamp: number | undefined;
}

export type Parsed = { ok: true; value: ReplayRequest } | { ok: false; line: number; reason: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const fail = (line: number, reason: string): Parsed => ({ ok: false, line, reason });

const SHAREGPT_ROLES: Record<string, "system" | "user" | "assistant"> = {
  system: "system",
  human: "user",
  user: "user",
  gpt: "assistant",
  assistant: "assistant",
  chatgpt: "assistant",
  bard: "assistant",
  bing: "assistant",
};

function timestampOf(v: unknown): number | undefined | "bad" {
  if (v === undefined || v === null) return undefined;
  if (typeof v === "number" && Number.isFinite(v)) return v < 1e11 ? v * 1000 : v;
  if (typeof v === "string") {
    const t = Date.parse(v);
    return Number.isNaN(t) ? "bad" : t;
  }
  return "bad";
}

function sharegpt(line: number, turns: unknown, model: string): Parsed | Obj {
  if (!Array.isArray(turns)) return fail(line, "'conversations' is not an array");
  const messages: { role: string; content: string }[] = [];
  for (const [i, t] of turns.entries()) {
    if (!isObj(t) || typeof t.from !== "string" || typeof t.value !== "string") return fail(line, `conversations[${i}] needs string 'from' and 'value'`);
    const role = SHAREGPT_ROLES[t.from.toLowerCase()];
    if (!role) return fail(line, `conversations[${i}].from '${t.from}' is not a known speaker`);
    messages.push({ role, content: t.value });
  }
  let last = messages.length - 1;
  while (last >= 0 && messages[last]?.role !== "user") last--;
  if (last < 0) return fail(line, "the conversation has no human turn");
  return { model, messages: messages.slice(0, last + 1) };
}

/** Parses line `line` (1-based) of a traffic file. */
export function parseTrafficLine(text: string, line: number, format: InputFormat, defaultModel: string): Parsed {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return fail(line, `not JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (!isObj(json)) return fail(line, "not a JSON object");
  const wrapped = isObj(json.body);
  let body: Obj;
  if (Array.isArray(json.conversations) || "conversations" in json) {
    const made = sharegpt(line, json.conversations, typeof json.model === "string" ? json.model : defaultModel);
    if ("ok" in made) return made as Parsed;
    body = made;
  } else body = wrapped ? (json.body as Obj) : json;
  if (json.body !== undefined && !wrapped) return fail(line, "'body' is not an object");
  let path: ReplayRequest["path"] = format === "anthropic" ? MESSAGES_PATH : CHAT_PATH;
  if (wrapped && json.endpoint !== undefined) {
    if (json.endpoint !== CHAT_PATH && json.endpoint !== MESSAGES_PATH) return fail(line, `'endpoint' must be ${CHAT_PATH} or ${MESSAGES_PATH}`);
    path = json.endpoint;
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    return fail(line, "no 'messages' (a chat request, a ShareGPT 'conversations' or a wrapped 'body')");
  if (body.model === undefined) body = { ...body, model: defaultModel };
  if (typeof body.model !== "string" || body.model === "") return fail(line, "'model' is not a string");
  if (path === MESSAGES_PATH && typeof body.max_tokens !== "number") return fail(line, "an Anthropic Messages request needs a numeric 'max_tokens'");
  const headers: Record<string, string> = {};
  if (wrapped && json.headers !== undefined) {
    if (!isObj(json.headers)) return fail(line, "'headers' is not an object");
    for (const [k, v] of Object.entries(json.headers)) {
      if (typeof v !== "string") return fail(line, `header '${k}' is not a string`);
      headers[k.toLowerCase()] = v;
    }
  }
  const tenant = wrapped ? json.tenant : undefined;
  if (tenant !== undefined && typeof tenant !== "string") return fail(line, "'tenant' is not a string");
  const timestamp = timestampOf(json.timestamp ?? json.time);
  if (timestamp === "bad") return fail(line, "'timestamp' is neither ISO 8601 nor epoch");
  return {
    ok: true,
    value: { line, path, body, model: body.model, stream: body.stream === true, tenant, headers, timestamp },
  };
}
