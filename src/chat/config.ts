/**
 * Settings of the trading-assistant chat: which engine answers and, for the optional LLM
 * engine, where the OpenAI-compatible chat-completions API is and how long it may take.
 * Read from the environment by `chatConfigFromEnv` (part of `loadConfig`, src/config.ts); with
 * no `CHAT_LLM_URL` the built-in engine answers every message.
 */

import { parseInteger, parseUrl } from "../config-parse.ts";

/** Default time budget of one LLM answer, tool calls included, before the built-in engine answers instead. */
export const CHAT_LLM_DEFAULT_TIMEOUT_MS = 15_000;
/** Default number of model turns (each may request tool calls) before the model must answer. */
export const CHAT_LLM_DEFAULT_MAX_ROUNDS = 4;

/** An OpenAI-compatible chat-completions API. */
export interface ChatLlmConfig {
  /**
   * CHAT_LLM_URL: the API's base URL (`https://api.openai.com/v1`), to which
   * `/chat/completions` is appended, or the full `.../chat/completions` URL.
   */
  url: string;
  /** CHAT_LLM_MODEL: the model name sent in every request. */
  model: string;
  /** CHAT_LLM_API_KEY: sent as `Authorization: Bearer <key>`; undefined sends none (a local server). */
  apiKey: string | undefined;
  /** CHAT_LLM_TIMEOUT_MS: the whole answer's time budget (default 15000, 1000-120000). */
  timeoutMs: number;
  /** CHAT_LLM_MAX_ROUNDS: model turns allowed to request tools (default 4, 1-10). */
  maxRounds: number;
}

/**
 * The chat's LLM engine from environment variables: `CHAT_LLM_URL`, `CHAT_LLM_MODEL`,
 * `CHAT_LLM_API_KEY`, `CHAT_LLM_TIMEOUT_MS`, `CHAT_LLM_MAX_ROUNDS`; null: the built-in engine
 * answers (the default). Each problem (a URL without a model, a malformed URL, a bad number)
 * is added to `problems`, which the caller (`loadConfig`) refuses to start with; the answer
 * then means nothing.
 *
 * @example
 * const llm = chatConfigFromEnv(process.env, problems); // null (the built-in engine) unless CHAT_LLM_URL is set
 */
export function chatConfigFromEnv(env: Record<string, string | undefined>, problems: string[]): ChatLlmConfig | null {
  const url = env.CHAT_LLM_URL?.trim() || undefined;
  const model = env.CHAT_LLM_MODEL?.trim() || undefined;
  const apiKey = env.CHAT_LLM_API_KEY?.trim() || undefined;
  const timeoutMs = parseInteger("CHAT_LLM_TIMEOUT_MS", env.CHAT_LLM_TIMEOUT_MS, CHAT_LLM_DEFAULT_TIMEOUT_MS, 1_000, 120_000, problems);
  const maxRounds = parseInteger("CHAT_LLM_MAX_ROUNDS", env.CHAT_LLM_MAX_ROUNDS, CHAT_LLM_DEFAULT_MAX_ROUNDS, 1, 10, problems);

  if (!url) {
    if (model || apiKey) problems.push("CHAT_LLM_MODEL and CHAT_LLM_API_KEY need CHAT_LLM_URL (the chat-completions API's base URL)");
    return null;
  }
  const parsed = parseUrl("CHAT_LLM_URL", url, problems);
  if (!model) problems.push("CHAT_LLM_MODEL is required with CHAT_LLM_URL (e.g. gpt-4o-mini)");
  return model && parsed ? { url: parsed, model, apiKey, timeoutMs, maxRounds } : null;
}

/** The chat-completions endpoint of a configured API. */
export function chatCompletionsUrl(llm: Pick<ChatLlmConfig, "url">): string {
  return /\/chat\/completions$/.test(llm.url) ? llm.url : `${llm.url}/chat/completions`;
}
