/**
 * Chat turns → prompt tokens, with the model's own chat template.
 *
 * The GGUF's `tokenizer.chat_template` is rendered as-is by node-llama-cpp's
 * `JinjaTemplateChatWrapper` (what llama-server and Ollama do), so the tiny model gets ChatML and a
 * Llama 3 or Qwen GGUF gets its own format. A GGUF without a template falls back to
 * `resolveChatWrapper(model)`, which guesses from the architecture and file name.
 *
 * Turn mapping: `system` → system, `user` → user, `assistant` → a model response, `tool` → user
 * (a `ChatTurn` carries no tool-call id or function name to build a function-call result from).
 * Adjacent turns of one kind are joined (with a blank line), as many templates require
 * alternation. A trailing `assistant` turn is continued rather than followed by a new one
 * (assistant prefill): the answer starts where its text ends.
 * A BOS token is prepended when the vocabulary asks for one and the template did not write it.
 *
 * Where generation ends: the model's end-of-generation tokens (EOS, EOT, `<|im_end|>`…) and the
 * wrapper's stop triggers. A trigger that starts with a special token stops at that token; a
 * plain-text trigger becomes a stop string.
 */
import { resolveChatWrapper, type ChatHistoryItem, type ChatWrapper, type LlamaModel, type LlamaText, type Token } from "node-llama-cpp";
import type { ChatTurn } from "./engine.ts";

/** A model's prompt formatting and its end-of-turn markers. */
export interface PromptFormat {
  /** Name of the chat wrapper in use (e.g. `JinjaTemplate`, `ChatML`), for logs. */
  readonly wrapperName: string;
  /** Prompt tokens for `messages`, ending where the assistant's answer begins. */
  tokens(messages: readonly ChatTurn[]): Token[];
  /** Tokens that end the answer (never emitted). */
  readonly stopTokens: ReadonlySet<Token>;
  /** Text that ends the answer (cut from the output). */
  readonly stopStrings: readonly string[];
}

/** Maps chat turns to node-llama-cpp history, ending with the model response to generate. */
export function toChatHistory(messages: readonly ChatTurn[]): ChatHistoryItem[] {
  const history: ChatHistoryItem[] = messages.map((turn): ChatHistoryItem => {
    switch (turn.role) {
      case "system":
        return { type: "system", text: turn.content };
      case "user":
      case "tool":
        return { type: "user", text: turn.content };
      case "assistant":
        return { type: "model", response: [turn.content] };
      default: {
        const never: never = turn.role;
        throw new Error(`unknown chat role ${String(never)}`);
      }
    }
  });
  // The last model response is the one generated: a trailing assistant turn is continued.
  if (history.at(-1)?.type !== "model") history.push({ type: "model", response: [] });
  return history;
}

function chatWrapperFor(model: LlamaModel): ChatWrapper {
  const template = model.fileInfo.metadata.tokenizer?.chat_template;
  if (typeof template === "string" && template.length > 0) {
    return resolveChatWrapper(model, { type: "jinjaTemplate", warningLogs: false });
  }
  return resolveChatWrapper(model, { warningLogs: false });
}

/** Builds the prompt format of `model`. */
export function createPromptFormat(model: LlamaModel): PromptFormat {
  const wrapper = chatWrapperFor(model);
  const bos = model.tokens.bos;
  const addBos = model.tokens.shouldPrependBosToken && bos !== null;

  // The triggers do not depend on the conversation; read them from a one-turn render.
  const probe = wrapper.generateContextState({ chatHistory: toChatHistory([{ role: "user", content: "x" }]) });
  const stopTokens = new Set<Token>();
  const stopStrings: string[] = [];
  for (const token of model.iterateAllTokens()) if (model.isEogToken(token)) stopTokens.add(token);
  for (const trigger of probe.stopGenerationTriggers) addTrigger(model, trigger, stopTokens, stopStrings);

  return {
    wrapperName: wrapper.wrapperName,
    stopTokens,
    stopStrings,
    tokens(messages) {
      const { contextText } = wrapper.generateContextState({ chatHistory: toChatHistory(messages) });
      const tokens = contextText.tokenize(model.tokenizer);
      if (addBos && tokens[0] !== bos) tokens.unshift(bos);
      return tokens;
    },
  };
}

function addTrigger(model: LlamaModel, trigger: LlamaText, stopTokens: Set<Token>, stopStrings: string[]): void {
  if (trigger.values.every((v) => typeof v === "string")) {
    const text = trigger.values.join("");
    if (text.length > 0 && !stopStrings.includes(text)) stopStrings.push(text);
    return;
  }
  const tokens = trigger.tokenize(model.tokenizer);
  const first = tokens[0];
  if (first === undefined) return;
  if (model.isSpecialToken(first) || model.isEogToken(first)) {
    stopTokens.add(first);
    return;
  }
  const text = model.detokenize(tokens);
  if (text.length > 0 && !stopStrings.includes(text)) stopStrings.push(text);
}
