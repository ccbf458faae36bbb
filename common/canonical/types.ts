/**
 * Gearbox's canonical model: one shape for chat and embeddings, whatever API the client speaks
 * and whatever backend serves it. Client schemas map into it, backends are produced from it.
 * Fields that a schema has and the canonical model does not know travel in `extra`, so a
 * same-API hop (OpenAI client → OpenAI backend) loses nothing.
 */

export type Role = "system" | "developer" | "user" | "assistant" | "tool";

export interface TextPart {
  type: "text";
  text: string;
}

/** An image by URL (`url`) or inline (`data` base64 + `mediaType`). */
export interface ImagePart {
  type: "image";
  url?: string;
  data?: string;
  mediaType?: string;
  detail?: "auto" | "low" | "high";
}

export interface AudioPart {
  type: "audio";
  data: string;
  format: string;
}

export interface FilePart {
  type: "file";
  fileId?: string;
  filename?: string;
  data?: string;
}

export type ContentPart = TextPart | ImagePart | AudioPart | FilePart;

export interface ToolCall {
  id: string;
  name: string;
  /** JSON text, exactly as the model produced it (it may be invalid JSON). */
  arguments: string;
}

export interface SystemMessage {
  role: "system" | "developer";
  content: string | TextPart[];
  name?: string;
}

export interface UserMessage {
  role: "user";
  content: string | ContentPart[];
  name?: string;
}

export interface AssistantMessage {
  role: "assistant";
  content: string | TextPart[] | null;
  name?: string;
  refusal?: string | null;
  toolCalls?: ToolCall[];
  /** Reasoning text some backends return (`reasoning_content`, thinking blocks). */
  reasoning?: string;
}

export interface ToolMessage {
  role: "tool";
  toolCallId: string;
  content: string | TextPart[];
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export interface FunctionTool {
  type: "function";
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

/**
 * `allowed`: only the named tools may be called (OpenAI `allowed_tools`); `mode: required` forces
 * a call to one of them. The full `tools` list stays in the request (a prompt cache keeps it).
 */
export type ToolChoice =
  | { type: "auto" }
  | { type: "none" }
  | { type: "required" }
  | { type: "function"; name: string }
  | { type: "allowed"; mode: "auto" | "required"; names: string[] };

export type ResponseFormat =
  { type: "text" } | { type: "json_object" } | { type: "json_schema"; name: string; schema?: Record<string, unknown>; strict?: boolean; description?: string };

export interface ChatRequest {
  model: string;
  messages: Message[];
  stream: boolean;
  includeUsage?: boolean;
  /** Upper bound on generated tokens, whichever parameter name the client used. */
  maxTokens?: number;
  /** Which OpenAI parameter carried `maxTokens` (reasoning models reject `max_tokens`). */
  maxTokensParam?: "max_tokens" | "max_completion_tokens";
  temperature?: number;
  topP?: number;
  n?: number;
  stop?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  logitBias?: Record<string, number>;
  logprobs?: boolean;
  topLogprobs?: number;
  seed?: number;
  user?: string;
  metadata?: Record<string, string>;
  tools?: FunctionTool[];
  toolChoice?: ToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: ResponseFormat;
  reasoningEffort?: string;
  /** Fields of the client's schema the canonical model does not model, kept for pass-through. */
  extra: Record<string, unknown>;
}

export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "function_call";

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  cachedInputTokens?: number;
  reasoningTokens?: number;
}

export interface ChatChoice {
  index: number;
  message: AssistantMessage;
  finishReason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatResponse {
  id: string;
  created: number;
  model: string;
  choices: ChatChoice[];
  usage?: Usage;
  systemFingerprint?: string | null;
  extra: Record<string, unknown>;
}

export interface ToolCallDelta {
  index: number;
  id?: string;
  name?: string;
  arguments?: string;
}

export interface ChunkChoice {
  index: number;
  delta: {
    role?: "assistant";
    content?: string | null;
    refusal?: string | null;
    reasoning?: string;
    toolCalls?: ToolCallDelta[];
  };
  finishReason: FinishReason | null;
  logprobs?: unknown;
}

export interface ChatChunk {
  id: string;
  created: number;
  model: string;
  choices: ChunkChoice[];
  usage?: Usage | null;
  extra: Record<string, unknown>;
}

export interface EmbeddingsRequest {
  model: string;
  /** Texts, or token arrays as OpenAI allows. */
  input: string[] | number[][];
  /** True when the client sent a single input (not an array). */
  singleInput: boolean;
  dimensions?: number;
  encodingFormat?: "float" | "base64";
  user?: string;
  extra: Record<string, unknown>;
}

export interface EmbeddingsResponse {
  model: string;
  data: { index: number; embedding: number[] | string }[];
  usage?: Usage;
}
