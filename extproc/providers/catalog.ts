/**
 * Known providers as configuration, not code: each preset is a backend kind, a base URL, an auth
 * scheme, the env variable its key usually lives in, parameter differences from OpenAI, and list
 * prices (USD per 1 M tokens, as published when this table was written: override them under
 * `providers[].pricing`). A provider in `gearbox.yaml` names a preset and overrides what differs.
 */

export const PROVIDER_KINDS = ["openai", "openai-compatible", "azure-openai", "anthropic", "gemini", "ollama"] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

export const AUTH_SCHEMES = ["bearer", "api-key", "x-api-key", "x-goog-api-key", "none"] as const;
export type AuthScheme = (typeof AUTH_SCHEMES)[number];

/** Prices in USD per 1 M tokens. */
export interface ModelPrice {
  input: number;
  output: number;
  cached_input?: number;
}

/** How an OpenAI-compatible API differs from OpenAI's own parameters. */
export interface ParamRules {
  /** Parameters the provider rejects: removed before sending. */
  drop?: string[];
  /** Parameters the provider names differently: OpenAI name → provider name. */
  rename?: Record<string, string>;
}

export interface Preset {
  kind: ProviderKind;
  base_url?: string;
  auth: AuthScheme;
  api_key_env?: string;
  params?: ParamRules;
  pricing?: Record<string, ModelPrice>;
}

/** The auth scheme each kind uses unless configured otherwise. */
export const DEFAULT_AUTH: Record<ProviderKind, AuthScheme> = {
  openai: "bearer",
  "openai-compatible": "bearer",
  "azure-openai": "api-key",
  anthropic: "x-api-key",
  gemini: "x-goog-api-key",
  ollama: "none",
};

export const PRESETS: Record<string, Preset> = {
  openai: {
    kind: "openai",
    base_url: "https://api.openai.com/v1",
    auth: "bearer",
    api_key_env: "OPENAI_API_KEY",
    pricing: {
      "gpt-4o": { input: 2.5, output: 10, cached_input: 1.25 },
      "gpt-4o-mini": { input: 0.15, output: 0.6, cached_input: 0.075 },
      "gpt-4.1": { input: 2, output: 8, cached_input: 0.5 },
      "gpt-4.1-mini": { input: 0.4, output: 1.6, cached_input: 0.1 },
      "gpt-4.1-nano": { input: 0.1, output: 0.4, cached_input: 0.025 },
      "text-embedding-3-small": { input: 0.02, output: 0 },
      "text-embedding-3-large": { input: 0.13, output: 0 },
    },
  },
  "azure-openai": { kind: "azure-openai", auth: "api-key", api_key_env: "AZURE_OPENAI_API_KEY" },
  anthropic: {
    kind: "anthropic",
    base_url: "https://api.anthropic.com/v1",
    auth: "x-api-key",
    api_key_env: "ANTHROPIC_API_KEY",
    pricing: {
      "claude-sonnet-4-5": { input: 3, output: 15, cached_input: 0.3 },
      "claude-haiku-4-5": { input: 1, output: 5, cached_input: 0.1 },
      "claude-opus-4-1": { input: 15, output: 75, cached_input: 1.5 },
    },
  },
  gemini: {
    kind: "gemini",
    base_url: "https://generativelanguage.googleapis.com/v1beta",
    auth: "x-goog-api-key",
    api_key_env: "GEMINI_API_KEY",
    pricing: {
      "gemini-2.0-flash": { input: 0.1, output: 0.4, cached_input: 0.025 },
      "gemini-2.5-flash": { input: 0.3, output: 2.5, cached_input: 0.075 },
      "gemini-2.5-pro": { input: 1.25, output: 10, cached_input: 0.31 },
    },
  },
  ollama: { kind: "ollama", base_url: "http://127.0.0.1:11434", auth: "none" },
  dashscope: {
    kind: "openai-compatible",
    base_url: "https://dashscope.aliyuncs.com/compatible-mode/v1",
    auth: "bearer",
    api_key_env: "DASHSCOPE_API_KEY",
    params: { drop: ["logit_bias", "metadata", "service_tier", "store"] },
    pricing: { "qwen-plus": { input: 0.4, output: 1.2 }, "qwen-turbo": { input: 0.05, output: 0.2 }, "qwen-max": { input: 1.6, output: 6.4 } },
  },
  deepseek: {
    kind: "openai-compatible",
    base_url: "https://api.deepseek.com/v1",
    auth: "bearer",
    api_key_env: "DEEPSEEK_API_KEY",
    params: { drop: ["n", "logit_bias", "seed", "metadata", "service_tier", "store", "parallel_tool_calls"] },
    pricing: { "deepseek-chat": { input: 0.27, output: 1.1, cached_input: 0.07 }, "deepseek-reasoner": { input: 0.55, output: 2.19, cached_input: 0.14 } },
  },
  moonshot: {
    kind: "openai-compatible",
    base_url: "https://api.moonshot.cn/v1",
    auth: "bearer",
    api_key_env: "MOONSHOT_API_KEY",
    params: { drop: ["logit_bias", "metadata", "service_tier", "store"] },
  },
  zhipu: {
    kind: "openai-compatible",
    base_url: "https://open.bigmodel.cn/api/paas/v4",
    auth: "bearer",
    api_key_env: "ZHIPUAI_API_KEY",
    params: { drop: ["n", "logit_bias", "presence_penalty", "frequency_penalty", "metadata", "service_tier", "store"] },
  },
  siliconflow: { kind: "openai-compatible", base_url: "https://api.siliconflow.cn/v1", auth: "bearer", api_key_env: "SILICONFLOW_API_KEY" },
  groq: {
    kind: "openai-compatible",
    base_url: "https://api.groq.com/openai/v1",
    auth: "bearer",
    api_key_env: "GROQ_API_KEY",
    params: { drop: ["logprobs", "top_logprobs", "logit_bias", "n", "metadata", "service_tier", "store"] },
  },
  mistral: {
    kind: "openai-compatible",
    base_url: "https://api.mistral.ai/v1",
    auth: "bearer",
    api_key_env: "MISTRAL_API_KEY",
    params: { drop: ["logit_bias", "logprobs", "top_logprobs", "user", "metadata", "service_tier", "store"], rename: { seed: "random_seed" } },
    pricing: { "mistral-small-latest": { input: 0.1, output: 0.3 }, "mistral-large-latest": { input: 2, output: 6 } },
  },
  xai: { kind: "openai-compatible", base_url: "https://api.x.ai/v1", auth: "bearer", api_key_env: "XAI_API_KEY" },
  vllm: { kind: "openai-compatible", base_url: "http://127.0.0.1:8000/v1", auth: "none" },
  "llama-cpp": { kind: "openai-compatible", base_url: "http://127.0.0.1:8080/v1", auth: "none" },
};
