/**
 * The optional LLM chat engine: any OpenAI-compatible chat-completions API, given the chat's
 * data tools (tools.ts) as function calls. The model's tool calls are run against the live
 * data sources and their results sent back, for at most `maxRounds` turns; the last turn
 * forbids further calls, so the model must answer. The figures of every tool result are the
 * answer's sources. Any failure (HTTP error, malformed answer, no final message, the time
 * budget spent) is an `LlmFailure`, on which `answerChat` falls back to the built-in engine.
 */
import { Type } from "@sinclair/typebox";
import { isObject, parseJsonOrUndefined } from "../json.ts";
import { withBudget } from "../time-budget.ts";
import { expectShape } from "../upstreams/http-json.ts";
import { type ChatLlmConfig, chatCompletionsUrl } from "./config.ts";
import type { ChatDeps } from "./deps.ts";
import { type ChatSource, type EngineAnswer, uniqueSources } from "./sources.ts";
import { CHAT_TOOLS, runChatTool } from "./tools.ts";

/** Why the LLM engine gave no answer. */
export type LlmFailureReason =
  /** The time budget was spent. */
  | "llm_timeout"
  /** The API was unreachable or answered a non-2xx status. */
  | "llm_unavailable"
  /** The API answered something that is not a chat completion, or never gave a final message. */
  | "llm_bad_answer";

/** The LLM engine failed; the caller falls back to the built-in engine. */
export class LlmFailure extends Error {
  override name = "LlmFailure";
  readonly reason: LlmFailureReason;
  constructor(reason: LlmFailureReason, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.reason = reason;
  }
}

const UPSTREAM = "chat-llm";

const ToolCall = Type.Object({
  id: Type.String(),
  type: Type.Optional(Type.String()),
  function: Type.Object({ name: Type.String(), arguments: Type.Optional(Type.Union([Type.String(), Type.Null()])) }),
});

const Completion = Type.Object({
  choices: Type.Array(
    Type.Object({
      message: Type.Object({
        role: Type.Optional(Type.String()),
        content: Type.Optional(Type.Union([Type.String(), Type.Null()])),
        tool_calls: Type.Optional(Type.Union([Type.Array(ToolCall), Type.Null()])),
      }),
    }),
    { minItems: 1 },
  ),
});

type Message =
  | { role: "system" | "user"; content: string }
  | { role: "assistant"; content: string | null; tool_calls?: unknown[] }
  | { role: "tool"; tool_call_id: string; content: string };

const SYSTEM_PROMPT = [
  "You are the trading assistant of an x402-paid data service on Base.",
  "Answer in a few plain sentences. Use only figures returned by the tools in this conversation; never state a price, rate or fee from memory.",
  "When a tool returns an error or no figure, say what you could not get instead of guessing.",
  "For questions about x402 payments, USDC on Base or this service, search the knowledge base and cite the entry id.",
  "Do not recommend buying or selling and do not predict prices. Do not add a financial-advice disclaimer: the service adds it.",
].join(" ");

function parseArguments(text: string | null | undefined): Record<string, unknown> {
  if (!text) return {};
  const value = parseJsonOrUndefined(text);
  return isObject(value) ? value : {};
}

async function complete(llm: ChatLlmConfig, messages: Message[], allowTools: boolean, signal: AbortSignal) {
  let response: Response;
  let text: string;
  try {
    response = await fetch(chatCompletionsUrl(llm), {
      method: "POST",
      headers: {
        accept: "application/json",
        "content-type": "application/json",
        ...(llm.apiKey ? { authorization: `Bearer ${llm.apiKey}` } : {}),
      },
      body: JSON.stringify({ model: llm.model, messages, tools: CHAT_TOOLS, tool_choice: allowTools ? "auto" : "none" }),
      signal,
    });
    text = await response.text();
  } catch (error) {
    if (signal.aborted) throw new LlmFailure("llm_timeout", `The LLM gave no answer within ${llm.timeoutMs} ms.`, { cause: error });
    throw new LlmFailure("llm_unavailable", "The LLM API is unreachable.", { cause: error });
  }
  if (response.status < 200 || response.status > 299) {
    throw new LlmFailure("llm_unavailable", `The LLM API answered HTTP ${response.status}.`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new LlmFailure("llm_bad_answer", "The LLM API answered with malformed JSON.", { cause: error });
  }
  try {
    return expectShape(UPSTREAM, Completion, body);
  } catch (error) {
    throw new LlmFailure("llm_bad_answer", "The LLM API's answer is not a chat completion.", { cause: error });
  }
}

/**
 * Answer `message` with the configured LLM, running the tool calls it asks for. Throws an
 * `LlmFailure` when the API fails, answers malformed, gives no final message, or the time
 * budget (`llm.timeoutMs`, tool calls included) is spent.
 */
export function answerWithLlm(message: string, deps: ChatDeps, llm: ChatLlmConfig): Promise<EngineAnswer> {
  const controller = new AbortController();
  // A tool call still running when the budget ends is left to finish on its own; its result is dropped.
  return withBudget(converse(message, deps, llm, controller.signal), llm.timeoutMs, () => {
    controller.abort();
    throw new LlmFailure("llm_timeout", `The LLM gave no answer within ${llm.timeoutMs} ms.`);
  });
}

async function converse(message: string, deps: ChatDeps, llm: ChatLlmConfig, signal: AbortSignal): Promise<EngineAnswer> {
  const messages: Message[] = [
    { role: "system", content: SYSTEM_PROMPT },
    { role: "user", content: message },
  ];
  const sources: ChatSource[] = [];
  for (let round = 1; round <= llm.maxRounds + 1; round++) {
    const allowTools = round <= llm.maxRounds;
    const completion = await complete(llm, messages, allowTools, signal);
    const reply = completion.choices[0]?.message;
    const calls = reply?.tool_calls ?? [];
    if (calls.length === 0 || !allowTools) {
      const content = reply?.content?.trim();
      if (!content) throw new LlmFailure("llm_bad_answer", "The LLM gave neither a tool call nor a message.");
      return { reply: content, sources: uniqueSources(sources) };
    }
    messages.push({ role: "assistant", content: reply?.content ?? null, tool_calls: calls });
    for (const call of calls) {
      const result = await runChatTool(deps, call.function.name, parseArguments(call.function.arguments));
      if (signal.aborted) throw new LlmFailure("llm_timeout", `The LLM gave no answer within ${llm.timeoutMs} ms.`);
      sources.push(...result.sources);
      messages.push({ role: "tool", tool_call_id: call.id, content: JSON.stringify(result.content) });
    }
  }
  throw new LlmFailure("llm_bad_answer", `The LLM still asked for tools after ${llm.maxRounds} rounds.`);
}
