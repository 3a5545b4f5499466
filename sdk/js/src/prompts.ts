/**
 * Prompt templates a tool's component offers to MCP clients
 * (`prompts/list`, `prompts/get`, `completion/complete`): list them in the
 * tool's `prompts`.
 *
 * ```ts
 * defineTool({
 *   ...,
 *   prompts: [{
 *     name: "review_pr",
 *     description: "Review a pull request for bugs.",
 *     arguments: [{ name: "number", description: "The pull request's number.", required: true }],
 *     get: ({ number }) => `Review pull request #${number} for bugs.`,
 *   }],
 * });
 * ```
 *
 * The host lists the prompts when the component loads and runs `get` and
 * `complete` with the tool's grants, read-only, and no workspace.
 */
import { engine } from "toolhost/engine";
import { messageOf } from "./errors.ts";
import { isContentBlock, text, type ContentBlock } from "./output.ts";
import { blockToWit, optionText } from "./wit.ts";

/** One argument of a prompt. Values are strings. */
export interface PromptArgument {
  /** 1-64 characters of A-Z, a-z, 0-9, `_` and `-`; unique in the prompt. */
  name: string;
  /** What to give, for the user or the model. */
  description?: string;
  /** Whether `get` must be given it. Default `false`. */
  required?: boolean;
}

/** One message of a filled-in prompt. */
export interface PromptMessage {
  /** Who says it. */
  role: "user" | "assistant";
  /** What it says; the host checks it like a tool's output (size, blocks). */
  content: ContentBlock;
}

/** What `get` may return: text, a block, or messages (text and blocks are the user's). */
export type PromptResult = string | ContentBlock | Array<string | ContentBlock | PromptMessage>;

/** A prompt the tool's component offers. */
export interface PromptDefinition {
  /** Unique on the host; 1-64 characters of A-Z, a-z, 0-9, `_` and `-`. */
  name: string;
  /** A title for people. */
  title?: string;
  /** What the prompt is for. */
  description?: string;
  /** Its arguments; `get` receives them by name. */
  arguments?: PromptArgument[];
  /** The messages for `args` (every required argument is given). */
  get(args: Record<string, string>): PromptResult;
  /** Values completing `value`, the start of `argument`, best first. */
  complete?(argument: string, value: string): string[];
}

/** A user message. */
export const user = (content: string | ContentBlock): PromptMessage => ({
  role: "user",
  content: typeof content === "string" ? text(content) : content,
});

/** A model message. */
export const assistant = (content: string | ContentBlock): PromptMessage => ({
  role: "assistant",
  content: typeof content === "string" ? text(content) : content,
});

function messages(result: PromptResult): PromptMessage[] {
  const items = Array.isArray(result) ? result : [result];
  return items.map((item) =>
    typeof item === "string" || isContentBlock(item) ? user(item) : (item as PromptMessage),
  );
}


/**
 * The `toolhost:tool/prompts` export for a tool's prompts. The build's
 * entry module does `export const prompts = exportPrompts(definition.prompts)`.
 */
export function exportPrompts(prompts: PromptDefinition[] = []): Record<string, (...args: any[]) => any> {
  const find = (name: string) => prompts.find((p) => p.name === name);
  return {
    listPrompts() {
      return prompts.map((p) => ({
        name: p.name,
        title: optionText(p.title),
        description: optionText(p.description),
        arguments: (p.arguments ?? []).map((a) => ({
          name: a.name,
          description: optionText(a.description),
          required: !!a.required,
        })),
      }));
    },

    getPrompt(name: string, args: Array<[string, string]>) {
      const prompt = find(name);
      if (!prompt) throw `this component offers no prompt ${JSON.stringify(name)}`;
      try {
        const result = prompt.get(Object.fromEntries(args));
        return {
          description: engine.none,
          messages: messages(result).map((m) => ({ role: m.role, content: blockToWit(m.content) })),
        };
      } catch (err) {
        throw messageOf(err);
      }
    },

    completeArgument(name: string, argument: string, value: string) {
      const prompt = find(name);
      if (!prompt?.complete) return [];
      try {
        return prompt.complete(argument, value).map(String);
      } catch {
        return [];
      }
    },
  };
}
