/**
 * Ask the user (elicitation), the client's model (sampling) or the client
 * for its roots during a call, one question at a time or several at once
 * under keys of the tool's (`toolhost:tool/ask`). Each is granted per tool
 * in `toolhost.toml` (`ask = ["user", "model", "roots"]` in
 * `[tools.<name>]`).
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
 *
 * // Several at once (an MCP 2026-07-28 client answers them in one round),
 * // the replies in the order asked and typed by question:
 * const [title, folders] = askAll([
 *   ["title", { user: { message: "Which title?", schema: { type: "object", properties: { title: { type: "string" } } } } }],
 *   ["roots", "roots"],
 * ]);
 * ```
 *
 * Each waits for the answer: the call's timeout stops while it does; the
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
  hints?: readonly string[];
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
  stopSequences?: readonly string[];
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

/** A form's message and schema as the contract's `form-question`. */
function formToWit(whose: string, message: string, schema: object): { message: string; requestedSchema: string } {
  if (typeof message !== "string") throw new TypeError(`${whose} message is a string`);
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    throw new TypeError(`${whose} schema is a JSON Schema object`);
  }
  return { message, requestedSchema: JSON.stringify(schema) };
}

/**
 * Ask the user `message` (at most 4096 characters) with a form whose
 * fields `schema` describes: a flat JSON Schema object (`properties` of type
 * string, number, integer, boolean or an array of choices, and `required`).
 * Waits for the answer; the host's refusal throws `AskError`.
 */
export function elicit(message: string, schema: object): ElicitAnswer {
  const text = formToWit("elicit's", message, schema).requestedSchema;
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

/** A folder or file the user works in, as the client names it (MCP `roots/list`). */
export interface Root {
  /** Where it is: a `file://` URI as a rule. */
  uri: string;
  /** A name for people, when the client gave one. */
  name?: string;
}

/** A question for the user: `elicit(message, schema)`'s arguments (granted as `"user"`). */
export interface UserQuestion {
  user: {
    /** What to ask (at most 4096 characters). */
    message: string;
    /** The form: a flat JSON Schema object, as `elicit` takes it. */
    schema: object;
  };
}

/** A question for the client's model: `sample(messages, options)`'s arguments (granted as `"model"`). */
export interface ModelQuestion {
  model: {
    /** The conversation: a string (one user message) or messages, as `sample` takes them. */
    messages: string | readonly SamplingMessage[];
    /** How to sample, as `sample` takes it (`maxTokens` is required). */
    options: SamplingOptions;
  };
}

/** The client's roots: the folders and files the user works in (granted as `"roots"`). */
export type RootsQuestion = "roots";

/** One question of `askAll`. */
export type Question = UserQuestion | ModelQuestion | RootsQuestion;

/**
 * A question under its key: 1-64 characters of A-Z, a-z, 0-9, `_`, `-` and
 * `.`, unique among the questions asked together. An MCP 2026-07-28 client
 * sees the key as the input request's.
 */
export type KeyedQuestion = readonly [key: string, question: Question];

/** The answer to one question of `askAll`: the user's, the model's or the client's roots. */
export type Reply = ElicitAnswer | SamplingResult | Root[];

/** The reply to a question of type `Q`: `ElicitAnswer`, `SamplingResult` or `Root[]`. */
export type ReplyTo<Q> = Q extends RootsQuestion
  ? Root[]
  : Q extends UserQuestion
    ? ElicitAnswer
    : Q extends ModelQuestion
      ? SamplingResult
      : never;

/** The replies to `askAll(questions)`, in the order asked, each typed by its question. */
export type Replies<T extends readonly KeyedQuestion[]> = {
  -readonly [I in keyof T]: T[I] extends readonly [string, infer Q] ? ReplyTo<Q> : never;
};

/** The most characters a question's key may have. */
const MAX_KEY_LEN = 64;
const KEY = /^[A-Za-z0-9_.-]{1,64}$/;

/** `key`, checked as the contract's keys are: 1-64 characters of A-Z, a-z, 0-9, `_`, `-` and `.`. */
function checkKey(key: unknown): string {
  if (typeof key === "string" && KEY.test(key)) return key;
  const shown = typeof key === "string" ? JSON.stringify(key.slice(0, MAX_KEY_LEN + 1)) : String(key);
  throw new TypeError(`the key ${shown} is not 1-${MAX_KEY_LEN} characters of A-Z, a-z, 0-9, \`_\`, \`-\` and \`.\``);
}

/** A question as the contract's `question` variant. */
function questionToWit(question: Question): { tag: "user" | "model" | "roots"; val?: any } {
  if (question === "roots") return { tag: "roots" };
  if (question !== null && typeof question === "object" && !Array.isArray(question)) {
    const kinds = ["user", "model"].filter((kind) => kind in question);
    if (kinds.length === 1 && "user" in question) {
      const user = question.user ?? ({} as UserQuestion["user"]);
      return { tag: "user", val: formToWit("the user question's", user.message, user.schema) };
    }
    if (kinds.length === 1 && "model" in question) {
      const model = question.model ?? ({} as ModelQuestion["model"]);
      return {
        tag: "model",
        val: { messages: samplingMessagesToWit(model.messages), options: samplingOptionsToWit(model.options) },
      };
    }
  }
  let shown: string;
  try {
    shown = JSON.stringify(question) ?? String(question);
  } catch {
    shown = String(question);
  }
  throw new TypeError(
    `a question is { user: { message, schema } }, { model: { messages, options } } or "roots", not ${shown.slice(0, 200)}`,
  );
}

/** The contract's `root` as a `Root`. */
function rootFromWit(raw: any): Root {
  const name = fromOption<string>(raw?.name);
  return { uri: String(raw?.uri ?? ""), ...(name === undefined ? {} : { name }) };
}

/** The contract's `answer` as a `Reply`. */
function replyFromWit(raw: any): Reply {
  switch (raw?.tag) {
    case "user":
      return elicitAnswerFromWit(raw.val);
    case "model":
      return samplingResultFromWit(raw.val);
    case "roots":
      return Array.from(raw.val ?? [], rootFromWit);
    default:
      throw new AskError(`unknown answer ${JSON.stringify(raw?.tag)}`);
  }
}

/**
 * Ask 1 to 8 questions at once, each under a key of the tool's, and get
 * the replies in the order asked: `ElicitAnswer` for a `{ user: { message,
 * schema } }` question, `SamplingResult` for a `{ model: { messages,
 * options } }` one, `Root[]` for `"roots"` (typed per question when the
 * array is written in the call). Keys are 1-64 characters of A-Z, a-z,
 * 0-9, `_`, `-` and `.`, unique: a bad key, a duplicate or a malformed
 * question throws `TypeError` before anything is asked. An MCP 2026-07-28
 * client sees the keys and is asked all in one round (a request that
 * already answers a key has that question answered at once); other
 * surfaces ask one after another. Waits for every answer; the host's
 * refusal (naming the question by its key) throws `AskError`, and a
 * question the tool may not ask refuses them all before any is asked.
 */
export function askAll<const T extends readonly KeyedQuestion[]>(questions: T): Replies<T> {
  if (!Array.isArray(questions)) throw new TypeError("askAll takes an array of [key, question] pairs");
  const seen = new Set<string>();
  const asked = questions.map((pair: unknown) => {
    if (!Array.isArray(pair) || pair.length !== 2) {
      throw new TypeError("askAll takes an array of [key, question] pairs");
    }
    const key = checkKey(pair[0]);
    if (seen.has(key)) throw new TypeError(`the key \`${key}\` names two questions`);
    seen.add(key);
    try {
      return { key, question: questionToWit(pair[1]) };
    } catch (err) {
      if (err instanceof TypeError) throw new TypeError(`question \`${key}\`: ${err.message}`);
      throw err;
    }
  });
  let raw: any[];
  try {
    raw = engine.ask.askAll(asked);
  } catch (err) {
    throw refusal(err);
  }
  const answers = Array.from(raw ?? []);
  if (answers.length !== asked.length) {
    throw new AskError(`the host sent ${answers.length} answers to ${asked.length} questions`);
  }
  return answers.map((answer, i) => {
    const { key, question } = asked[i]!;
    if (answer?.tag !== question.tag) {
      throw new AskError(`question \`${key}\`: the host answered a ${question.tag} question with ${JSON.stringify(answer?.tag)}`);
    }
    return replyFromWit(answer);
  }) as Replies<T>;
}

/**
 * Ask the client for its roots: the folders and files the user works in
 * (MCP `roots/list`; granted as `"roots"`). `askAll` with the one question
 * `["roots", "roots"]`, so asked under the key `roots`. The host's refusal
 * throws `AskError`.
 */
export function roots(): Root[] {
  return askAll([["roots", "roots"]])[0];
}
