/**
 * Canonical messages → Anthropic `system` + `messages`.
 *
 * - System and developer messages, wherever they stand, become the top-level `system`, in order
 *   (a string for one, text blocks for several): Anthropic has no system role in `messages`.
 * - Tool results become `tool_result` blocks in a user turn; consecutive turns of one role are
 *   merged into one (Anthropic wants user and assistant to alternate), so several tool results
 *   and a following user message share a turn, results first, as Anthropic requires.
 * - Empty text is dropped (Anthropic rejects empty text blocks, and OpenAI clients send an
 *   assistant `content: ""` next to tool calls); a turn left with nothing is dropped.
 * - Assistant `reasoning` is not sent: Anthropic only takes thinking blocks back with the
 *   signature it issued, which the OpenAI schema does not carry. `name` fields are not sent.
 * Content Anthropic cannot take is a 400 naming the field (`messages[2].content[1]`). A
 * conversation left with no turn at all goes out as `messages: []`: Anthropic's own 400 says so.
 */
import type { AssistantMessage, ContentPart, FilePart, ImagePart, Message, TextPart } from "../../../common/canonical/types.ts";
import { invalidRequest, unreachable } from "../../../common/errors.ts";
import { isObject } from "../../../common/schemas/fields.ts";
import type {
  AnthropicAssistantBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicTextBlock,
  AnthropicToolResultBlock,
  AnthropicUserBlock,
} from "./anthropic-wire.ts";

/** The prompt half of an Anthropic request. */
export interface AnthropicPrompt {
  system?: string | AnthropicTextBlock[];
  messages: AnthropicMessage[];
}

type Turn = { role: "user"; blocks: AnthropicUserBlock[] } | { role: "assistant"; blocks: AnthropicAssistantBlock[] };

const IMAGE_TYPES: ReadonlySet<string> = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
const DATA_URL = /^data:([^;,]+)(?:;[^,]*)?;base64,(.*)$/s;
const PDF_BASE64_MAGIC = "JVBERi0"; // "%PDF-"

/** Maps the conversation; `extraSystem` (Gearbox's own instruction) is appended to `system`. */
export function toAnthropicPrompt(messages: readonly Message[], extraSystem?: string): AnthropicPrompt {
  const system: string[] = [];
  const turns: Turn[] = [];
  messages.forEach((m, i) => {
    switch (m.role) {
      case "system":
      case "developer":
        system.push(...texts(m.content));
        return;
      case "user":
        return addTurn(turns, { role: "user", blocks: userBlocks(m.content, i) });
      case "assistant":
        return addTurn(turns, { role: "assistant", blocks: assistantBlocks(m, i) });
      case "tool":
        return addTurn(turns, { role: "user", blocks: [toolResult(m.toolCallId, m.content)] });
      default:
        return unreachable(m, "message role");
    }
  });
  if (extraSystem !== undefined) system.push(extraSystem);
  const prompt: AnthropicPrompt = { messages: turns.map(toMessage) };
  if (system.length === 1) prompt.system = system[0] ?? "";
  else if (system.length > 1) prompt.system = system.map((text) => ({ type: "text", text }));
  return prompt;
}

function addTurn(turns: Turn[], turn: Turn): void {
  if (turn.blocks.length === 0) return;
  const last = turns.at(-1);
  if (last?.role === "user" && turn.role === "user") last.blocks.push(...turn.blocks);
  else if (last?.role === "assistant" && turn.role === "assistant") last.blocks.push(...turn.blocks);
  else turns.push(turn);
}

/** A turn of one text block is sent as a plain string, as Anthropic's own examples do. */
function toMessage(turn: Turn): AnthropicMessage {
  const [only, ...rest] = turn.blocks;
  if (only?.type === "text" && rest.length === 0) return { role: turn.role, content: only.text };
  return turn.role === "user" ? { role: "user", content: turn.blocks } : { role: "assistant", content: turn.blocks };
}

function texts(content: string | TextPart[]): string[] {
  const all = typeof content === "string" ? [content] : content.map((p) => p.text);
  return all.filter((t) => t !== "");
}

function textBlocks(content: string | TextPart[]): AnthropicTextBlock[] {
  return texts(content).map((text) => ({ type: "text", text }));
}

function userBlocks(content: string | ContentPart[], i: number): AnthropicUserBlock[] {
  if (typeof content === "string") return textBlocks(content);
  const blocks: AnthropicUserBlock[] = [];
  content.forEach((part, j) => {
    const path = `messages[${i}].content[${j}]`;
    switch (part.type) {
      case "text":
        if (part.text !== "") blocks.push({ type: "text", text: part.text });
        return;
      case "image":
        blocks.push(imageBlock(part, `${path}.image_url`));
        return;
      case "audio":
        throw invalidRequest(`'${path}': Anthropic models do not take audio input.`, path, "unsupported_content");
      case "file":
        blocks.push(fileBlock(part, `${path}.file`));
        return;
      default:
        return unreachable(part, "content part");
    }
  });
  return blocks;
}

function imageBlock(part: ImagePart, path: string): AnthropicImageBlock {
  if (part.url !== undefined) return { type: "image", source: { type: "url", url: part.url } };
  if (part.data === undefined) throw invalidRequest(`'${path}' has neither a URL nor data.`, path);
  return { type: "image", source: { type: "base64", media_type: imageType(part.mediaType ?? "", path), data: part.data } };
}

function imageType(mediaType: string, path: string): string {
  if (IMAGE_TYPES.has(mediaType)) return mediaType;
  throw invalidRequest(`'${path}': Anthropic takes JPEG, PNG, GIF and WebP images, not '${mediaType || "unknown"}'.`, path, "unsupported_content");
}

/**
 * An inline file (`file_data`, a `data:` URL; bare base64 only when it is a PDF) → a document
 * block for PDF and plain text, an image block for images. File ids name files stored at the
 * client's provider, which Anthropic cannot read: 400.
 */
function fileBlock(part: FilePart, path: string): AnthropicUserBlock {
  if (part.fileId !== undefined) {
    throw invalidRequest(
      `'${path}.file_id': the Anthropic backend cannot read uploaded files; send the file inline as 'file_data'.`,
      `${path}.file_id`,
      "unsupported_content",
    );
  }
  if (part.data === undefined) throw invalidRequest(`'${path}' needs 'file_data'.`, path);
  const dataPath = `${path}.file_data`;
  const match = DATA_URL.exec(part.data);
  const mediaType = match ? (match[1] ?? "") : part.data.startsWith(PDF_BASE64_MAGIC) ? "application/pdf" : "";
  const data = match ? (match[2] ?? "") : part.data;
  const title = part.filename === undefined ? {} : { title: part.filename };
  if (mediaType === "application/pdf") return { type: "document", source: { type: "base64", media_type: "application/pdf", data }, ...title };
  if (mediaType === "text/plain") {
    return { type: "document", source: { type: "text", media_type: "text/plain", data: Buffer.from(data, "base64").toString("utf8") }, ...title };
  }
  if (mediaType.startsWith("image/")) return { type: "image", source: { type: "base64", media_type: imageType(mediaType, dataPath), data } };
  const what = mediaType === "" ? "a file whose type is unknown (send a data: URL)" : `'${mediaType}'`;
  throw invalidRequest(`'${dataPath}': Anthropic takes PDF, plain-text and image files, not ${what}.`, dataPath, "unsupported_content");
}

function assistantBlocks(m: AssistantMessage, i: number): AnthropicAssistantBlock[] {
  const blocks: AnthropicAssistantBlock[] = m.content === null ? [] : textBlocks(m.content);
  if (blocks.length === 0 && m.refusal) blocks.push({ type: "text", text: m.refusal });
  m.toolCalls?.forEach((call, k) => {
    const input = toolInput(call.arguments, `messages[${i}].tool_calls[${k}].function.arguments`);
    blocks.push({ type: "tool_use", id: call.id, name: call.name, input });
  });
  return blocks;
}

/** Tool call arguments → `tool_use.input`, which must be a JSON object ("" means no arguments). */
function toolInput(args: string, path: string): Record<string, unknown> {
  if (args.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw invalidRequest(`'${path}' is not valid JSON; Anthropic needs tool call arguments as a JSON object.`, path, "invalid_tool_arguments");
  }
  if (!isObject(parsed)) throw invalidRequest(`'${path}' must be a JSON object for Anthropic.`, path, "invalid_tool_arguments");
  return parsed;
}

function toolResult(toolUseId: string, content: string | TextPart[]): AnthropicToolResultBlock {
  const block: AnthropicToolResultBlock = { type: "tool_result", tool_use_id: toolUseId };
  if (typeof content === "string") {
    if (content !== "") block.content = content;
  } else {
    const parts = textBlocks(content);
    if (parts.length > 0) block.content = parts;
  }
  return block;
}
