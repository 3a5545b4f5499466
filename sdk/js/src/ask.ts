/**
 * Ask the user (elicitation) or the client's model (sampling) during a call
 * (`toolhost:tool/ask`). Each is granted per tool in `toolhost.toml`
 * (`ask = ["user", "model"]` in `[tools.<name>]`).
 *
 * ```ts
 * const answer = elicit("Which name should the report carry?", {
 *   type: "object",
 *   properties: { name: { type: "string", title: "Name", minLength: 1 } },
 *   required: ["name"],
 * });
 * if (answer.action !== "accept") return `Not renamed: the user chose ${answer.action}.`;
 * const name = answer.content!.name as string;
 *
 * const summary = sample(`Summarise in one sentence:\n\n${text}`, { maxTokens: 200 }).text;
 * ```
 *
 * Both wait for the answer: the call's timeout stops while they do; the
 * wait has its own limit (`[limits] ask_timeout_ms`, 10 minutes by
 * default). The host's refusal throws `AskError` with its reason.
 */
import { engine } from "toolhost/engine";
import { AskError, messageOf, witPayload } from "./errors.ts";
import type { ContentBlock } from "./output.ts";
import { elicitAnswerFromWit, fromOption, optionText, samplingContentFromWit, samplingContentToWit } from "./wit.ts";

export { AskError };

/** What the user did with a question. */
export interface ElicitAnswer {
  /** `accept`: answered the form; `decline`: said no; `cancel`: dismissed it without choosing. */
  action: "accept" | "decline" | "cancel";
  /** The form's values (a JSON object), when accepted. */
  content?: Record<string, unknown>;
}

/** Text, an image or audio: what a model's answer says. */
export type SamplingContent =
  | { type: "text"; text: string }
  | { type: "image"; mediaType: string; data: Uint8Array }
  | { type: "audio"; mediaType: string; data: Uint8Array };

/** One message of the conversation to sample from. */
export interface SamplingMessage {
  /** Who says it. */
  role: "user" | "assistant";
  /**
   * What it says: text, or a `text`, `image` or `audio` block (the
   * helpers of the same names make them; other blocks are refused). The
   * prompt helpers `user(...)` and `assistant(...)` make such messages.
   */
  content: string | ContentBlock;
}

/** Which model the client should pick: hints and priorities from 0 to 1. */
export interface ModelPreferences {
  /** Model names or families, best first, e.g. `claude-3-5-sonnet`. */
  hints?: string[];
  /** How much low cost matters. */
  costPriority?: number;
  /** How much speed matters. */
  speedPriority?: number;
  /** How much capability matters. */
  intelligencePriority?: number;
}

/** How to sample. */
export interface SamplingOptions {
  /** The most tokens to sample (the client may sample fewer): 1 to 2^32-1. */
  maxTokens: number;
  /** A system prompt the client may use. */
  systemPrompt?: string;
  /** The sampling temperature. */
  temperature?: number;
  /** Sequences that end the sample. */
  stopSequences?: string[];
  /** Which model to pick. */
  modelPreferences?: ModelPreferences;
}

/** What the client's model said. */
export interface SamplingResult {
  /** Who says it (the model, as a rule). */
  role: "user" | "assistant";
  /** What it says. */
  content: SamplingContent;
  /** The text, when `content` is text. */
  text?: string;
  /** The model that answered. */
  model: string;
  /** Why it stopped (`endTurn`, `stopSequence`, `maxTokens`, …), when the client said. */
  stopReason?: string;
}

const U32_MAX = 2 ** 32 - 1;

function refusal(err: unknown): AskError {
  const payload = witPayload(err);
  return new AskError(typeof payload === "string" ? payload : messageOf(err));
}

function optionNumber(name: string, value: number | undefined): number | null | undefined {
  if (value === undefined || value === null) return engine.none;
  if (typeof value !== "number" || !Number.isFinite(value)) {
    throw new TypeError(`${name} is a finite number, not ${JSON.stringify(value)}`);
  }
  return value;
}

function strings(name: string, values: readonly string[] | undefined): string[] {
  if (values === undefined || values === null) return [];
  if (!Array.isArray(values) || values.some((v) => typeof v !== "string")) {
    throw new TypeError(`${name} is an array of strings`);
  }
  return [...values];
}

/** The messages `sample` was given, as the contract's `sampling-message` list. */
export function samplingMessagesToWit(messages: string | readonly SamplingMessage[]): any[] {
  if (typeof messages === "string") return [{ role: "user", content: samplingContentToWit(messages) }];
  if (!Array.isArray(messages)) throw new TypeError("sample's messages are a string or an array of messages");
  return messages.map((m) => {
    if (m?.role !== "user" && m?.role !== "assistant") {
      throw new TypeError(`a sampling message's role is "user" or "assistant", not ${JSON.stringify(m?.role)}`);
    }
    return { role: m.role, content: samplingContentToWit(m.content) };
  });
}

/** `sample`'s options as the contract's `sampling-options`. */
export function samplingOptionsToWit(options: SamplingOptions): any {
  const maxTokens = options?.maxTokens;
  if (!Number.isInteger(maxTokens) || maxTokens < 1 || maxTokens > U32_MAX) {
    throw new TypeError(`maxTokens is a whole number from 1 to ${U32_MAX}, not ${JSON.stringify(maxTokens)}`);
  }
  if (options.systemPrompt !== undefined && typeof options.systemPrompt !== "string") {
    throw new TypeError("systemPrompt is a string");
  }
  const prefs = options.modelPreferences;
  return {
    systemPrompt: optionText(options.systemPrompt),
    maxTokens,
    temperature: optionNumber("temperature", options.temperature),
    stopSequences: strings("stopSequences", options.stopSequences),
    modelPreferences:
      prefs === undefined || prefs === null
        ? engine.none
        : {
            hints: strings("modelPreferences.hints", prefs.hints),
            costPriority: optionNumber("modelPreferences.costPriority", prefs.costPriority),
            speedPriority: optionNumber("modelPreferences.speedPriority", prefs.speedPriority),
            intelligencePriority: optionNumber("modelPreferences.intelligencePriority", prefs.intelligencePriority),
          },
  };
}

/** The contract's `sampling-result` as a `SamplingResult`. */
export function samplingResultFromWit(raw: any): SamplingResult {
  const content = samplingContentFromWit(raw?.content);
  const stopReason = fromOption<string>(raw?.stopReason);
  return {
    role: raw?.role === "user" ? "user" : "assistant",
    content,
    ...(content.type === "text" ? { text: content.text } : {}),
    model: String(raw?.model ?? ""),
    ...(stopReason === undefined ? {} : { stopReason }),
  };
}

/**
 * Ask the user `message` (at most 4096 characters) with a form whose
 * fields `schema` describes: a flat JSON Schema object (`properties` of type
 * string, number, integer, boolean or an array of choices, and `required`).
 * Waits for the answer; the host's refusal throws `AskError`.
 */
export function elicit(message: string, schema: object): ElicitAnswer {
  if (typeof message !== "string") throw new TypeError("elicit's message is a string");
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw new TypeError("elicit's schema is a JSON Schema object");
  }
  const text = JSON.stringify(schema);
  let raw: unknown;
  try {
    raw = engine.ask.elicit(message, text);
  } catch (err) {
    throw refusal(err);
  }
  return elicitAnswerFromWit(raw);
}

/**
 * Ask the client's model to continue `messages`: a string (one user
 * message) or messages (at most 64). `maxTokens` bounds the answer; the
 * model preferences help the client pick a model. Waits for the answer;
 * the host's refusal throws `AskError`.
 */
export function sample(messages: string | readonly SamplingMessage[], options: SamplingOptions): SamplingResult {
  const witMessages = samplingMessagesToWit(messages);
  const witOptions = samplingOptionsToWit(options);
  let raw: unknown;
  try {
    raw = engine.ask.sample(witMessages, witOptions);
  } catch (err) {
    throw refusal(err);
  }
  return samplingResultFromWit(raw);
}
