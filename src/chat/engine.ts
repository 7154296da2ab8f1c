/**
 * The trading-assistant chat engine behind `POST /api/chat`: the built-in engine by default
 * (builtin.ts, offline, keyword rules over live figures), or an OpenAI-compatible LLM with
 * the same data tools when one is configured (llm.ts). Either way the reply carries the
 * disclaimer exactly once and `sources` lists every live figure and knowledge-base entry used.
 *
 * Failures: when the LLM fails or is slow, the built-in engine answers instead and the answer
 * says so (`engine: "builtin"`, `fallback`). When an upstream that the question needs is down,
 * `answerChat` throws its `UpstreamError` (502/503/504) rather than answer without the figure;
 * a question answered in part names what it could not fetch.
 */

import { answerBuiltin, NOT_ADVICE } from "./builtin.ts";
import type { ChatLlmConfig } from "./config.ts";
import type { ChatDeps } from "./deps.ts";
import { answerWithLlm, LlmFailure, type LlmFailureReason } from "./llm.ts";
import type { EngineAnswer } from "./sources.ts";

export type { ChatSource } from "./sources.ts";

/** Why the built-in engine answered although an LLM is configured. */
export interface ChatFallback {
  from: "llm";
  reason: LlmFailureReason;
  message: string;
}

/** A chat answer: plain sentences that say "Not financial advice." exactly once, and every figure and entry used. */
export interface ChatAnswer extends EngineAnswer {
  /** Which engine wrote `reply`. */
  engine: "builtin" | "llm";
  /** Present when the LLM was configured but failed and the built-in engine answered. */
  fallback?: ChatFallback;
}

// Any sentence a model writes about advice: the service's own disclaimer replaces it, so it is said once.
const ADVICE_SENTENCE = /[^.!?\n]*\bnot (?:financial|investment) advice\b[^.!?\n]*[.!?]?/gi;

/** A model's reply with its own disclaimers removed and the service's added once. */
export function withDisclaimer(reply: string): string {
  const body = reply
    .replace(ADVICE_SENTENCE, "")
    .replace(/[ \t]+/g, " ")
    .trim();
  return body === "" ? NOT_ADVICE : `${body} ${NOT_ADVICE}`;
}

/**
 * Answer one chat message with live figures fetched now, asking `llm` first (from
 * `chatConfigFromEnv`); null or absent: the built-in engine.
 *
 * @example
 * const answer = await answerChat("what is ETH at?", chatDepsFromContext(ctx));
 * // { reply: "ETH (WETH on Base) is at $3,120.45 (...). Not financial advice.", engine: "builtin", sources: [...] }
 */
export async function answerChat(message: string, deps: ChatDeps, llm: ChatLlmConfig | null = null): Promise<ChatAnswer> {
  if (llm) {
    try {
      const answer = await answerWithLlm(message, deps, llm);
      return { reply: withDisclaimer(answer.reply), engine: "llm", sources: answer.sources };
    } catch (error) {
      if (!(error instanceof LlmFailure)) throw error;
      deps.log.warn("the chat LLM failed; the built-in engine answers", { reason: error.reason, error, cause: error.cause });
      const builtin = await answerBuiltin(message, deps);
      return {
        ...builtin,
        engine: "builtin",
        fallback: { from: "llm", reason: error.reason, message: `${error.message} The built-in engine answered instead.` },
      };
    }
  }
  const builtin = await answerBuiltin(message, deps);
  return { ...builtin, engine: "builtin" };
}
