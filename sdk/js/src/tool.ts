import { engine } from "toolhost/engine";
import { Failed, InvalidInput, ToolError, messageOf, toToolError } from "./errors.ts";
import { Output, isPlainObject, toJsonText, type ContentBlock } from "./output.ts";
import { blockToWit } from "./wit.ts";
import type { PromptDefinition } from "./prompts.ts";
import type { ResourceDefinition, ResourceTemplateDefinition } from "./resources.ts";
import { dedent } from "./text.ts";
import { getSession, send, type SendOptions, type Sent, type SessionInfo } from "./sessions.ts";

/** What a call does to the world. */
export type Effect = "read" | "idempotent" | "write";

/** A JSON Schema object (draft 2020-12). */
export type JsonSchema = Record<string, unknown>;

/**
 * A Zod (v4) schema, recognised by shape so the SDK does not depend on zod:
 * its JSON Schema comes from `schema.toJSONSchema()` and each input is
 * parsed with `schema.safeParse` (defaults and transforms apply).
 */
export interface ZodLike<T = unknown> {
  _zod: unknown;
  safeParse(input: unknown): { success: true; data: T } | { success: false; error: { issues?: unknown[]; message: string } };
  toJSONSchema(params?: Record<string, unknown>): JsonSchema;
}

/** The session a call belongs to. */
export interface Session {
  id: string;
  channel?: string;
  mode: "live" | "dry-run";
  /** The session owner's auth (parsed JSON; a string when it is not JSON). */
  auth?: unknown;
}

/** What a tool knows about the call it is running. */
export interface CallContext {
  /** Unique per call. */
  callId: string;
  /** 1 on the first attempt; retries run in fresh instances with 2, 3. */
  attempt: number;
  session: Session;
  /** Auth of whoever approved the call; absent when it needed no approval. */
  approvedBy?: unknown;
  /** The session's frozen instant (RFC 3339), when it has one. */
  asOf?: string;
  /** The session's workspace directory as the tool sees it (`/workspace`); absent when the tool is granted no workspace. */
  workspaceDir?: string;
  /** The host's durable state directory, shared by every session (`/state`); absent unless the tool is granted `state`. Read-only in a read call. */
  stateRoot?: string;
  /** Start or resume a session on `channel` and append `message` to it (see `sessions.send`). */
  send(channel: string, message: string, options?: SendOptions): Sent;
  /** The session `id` on `channel`, if this call's principal may use it (see `sessions.getSession`). */
  getSession(channel: string, id: string): SessionInfo | undefined;
}

/** What `execute` may return. */
export type ToolResult = string | Output | ContentBlock[] | Record<string, unknown> | unknown[] | number | boolean | null | undefined;

/** A tool, as passed to `defineTool`. `I` is the input's type. */
export interface ToolDefinition<I = any> {
  /** Written for the model: what the tool does and when to use it (≤ 4096 characters). Dedented. */
  description: string;
  /** JSON Schema of the input (`type: "object"`), or a Zod object schema. Absent: the tool takes `{}`. */
  inputSchema?: JsonSchema | ZodLike<I>;
  /** JSON Schema of the structured result (or a Zod schema), advertised to clients. */
  outputSchema?: JsonSchema | ZodLike;
  /** The effect of a call: fixed, or computed from the validated input. Default `"write"`. */
  effect?: Effect | ((input: I) => Effect);
  /** Input properties that carry time bounds (RFC 3339 instants). */
  timeArgs?: string[];
  /** The result a dry-run session shows for a stubbed call (runs with no grants). */
  dryRunResult?: (input: I) => ToolResult;
  /** Runs the call. Synchronous (the SDK's kv, fs and http helpers are). */
  execute(input: I, ctx: CallContext): ToolResult;
  /** Prompt templates the component offers to MCP clients (see `prompts.ts`). */
  prompts?: PromptDefinition[];
  /** Resources at fixed addresses the component offers to MCP clients (see `resources.ts`). */
  resources?: ResourceDefinition[];
  /** Templates of the resources the component offers by address (see `resources.ts`). */
  resourceTemplates?: ResourceTemplateDefinition[];
}

/** A defined tool; `export default` it from `tool.ts`. */
export interface Tool<I = any> extends ToolDefinition<I> {
  readonly __toolhost: true;
}

/** Declares a tool. `export default defineTool({...})` from the tool's module. */
export function defineTool<I = any>(definition: ToolDefinition<I>): Tool<I> {
  if (!definition || typeof definition.execute !== "function") {
    throw new TypeError("defineTool: `execute` must be a function");
  }
  if (typeof definition.description !== "string" || definition.description.trim() === "") {
    throw new TypeError("defineTool: `description` is required");
  }
  return Object.freeze({ ...definition, __toolhost: true as const });
}

function isZod(schema: unknown): schema is ZodLike {
  return !!schema && typeof schema === "object" && "_zod" in (schema as object) && typeof (schema as any).safeParse === "function";
}

function schemaJson(schema: JsonSchema | ZodLike | undefined, io: "input" | "output"): JsonSchema | undefined {
  if (schema === undefined) return undefined;
  if (isZod(schema)) {
    const json = schema.toJSONSchema({ io, unrepresentable: "any" });
    delete (json as any).$schema;
    return { $schema: "https://json-schema.org/draft/2020-12/schema", ...json };
  }
  return schema;
}

/** Fills in `default`s of absent properties (recursively into objects that are present). */
function applyDefaults(schema: any, value: any): any {
  if (!schema || typeof schema !== "object" || !isPlainObject(value) || !isPlainObject(schema.properties)) {
    return value;
  }
  const out: Record<string, unknown> = { ...value };
  for (const [name, prop] of Object.entries(schema.properties as Record<string, any>)) {
    if (!(name in out)) {
      if (prop && typeof prop === "object" && "default" in prop) out[name] = structuredCloneJson(prop.default);
    } else {
      out[name] = applyDefaults(prop, out[name]);
    }
  }
  return out;
}

function structuredCloneJson<T>(value: T): T {
  return value === undefined ? value : JSON.parse(JSON.stringify(value));
}

function zodMessage(error: { issues?: any[]; message: string }): string {
  const issues = error.issues ?? [];
  if (issues.length === 0) return error.message;
  return issues
    .map((issue: any) => {
      const path = Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.join(".") : "input";
      return `${path}: ${issue.message}`;
    })
    .join("; ");
}

/** Decodes the call's JSON input (empty is `{}`), applying defaults or the Zod schema. */
function parseInput(tool: ToolDefinition, text: string): any {
  let value: unknown;
  try {
    value = text.trim() === "" ? {} : JSON.parse(text);
  } catch (err) {
    throw new InvalidInput(`input is not JSON: ${messageOf(err)}`);
  }
  const schema = tool.inputSchema;
  if (isZod(schema)) {
    const parsed = schema.safeParse(value);
    if (!parsed.success) throw new InvalidInput(zodMessage(parsed.error));
    return parsed.data;
  }
  return applyDefaults(schema, value);
}

function outputToWit(result: unknown): any {
  const out = Output.from(result);
  return {
    content: out.content.map(blockToWit),
    structured: out.structured === undefined ? engine.none : toJsonText(out.structured),
    isError: !!out.isError,
  };
}

function errorToWit(err: unknown): { tag: string; val: string } {
  const error: ToolError = toToolError(err);
  return { tag: error.kind, val: error.message };
}

function parseAuth(text: string | null | undefined): unknown {
  if (text === null || text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function contextFromWit(ctx: any): CallContext {
  const out: CallContext = {
    callId: ctx.callId,
    attempt: Number(ctx.attempt),
    session: {
      id: ctx.session.id,
      mode: ctx.session.mode,
    },
    send,
    getSession,
  };
  if (ctx.session.channel !== null && ctx.session.channel !== undefined) out.session.channel = ctx.session.channel;
  const auth = parseAuth(ctx.session.auth);
  if (auth !== undefined) out.session.auth = auth;
  const approvedBy = parseAuth(ctx.approvedBy);
  if (approvedBy !== undefined) out.approvedBy = approvedBy;
  if (ctx.asOf !== null && ctx.asOf !== undefined) out.asOf = ctx.asOf;
  const workspaceDir = engine.context.workspaceDir();
  if (workspaceDir !== null && workspaceDir !== undefined) out.workspaceDir = workspaceDir;
  const stateRoot = engine.context.stateRoot();
  if (stateRoot !== null && stateRoot !== undefined) out.stateRoot = stateRoot;
  return out;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return !!value && (typeof value === "object" || typeof value === "function") && typeof (value as any).then === "function";
}

const EFFECTS = new Set(["read", "idempotent", "write"]);

/**
 * The `toolhost:tool/tool` export for a defined tool. The build's entry
 * module does `export const tool = exportTool(definition)`.
 */
export function exportTool(tool: ToolDefinition): Record<string, (...args: any[]) => any> {
  return {
    metadata() {
      const effect = tool.effect ?? "write";
      const input = schemaJson(tool.inputSchema, "input");
      const output = schemaJson(tool.outputSchema, "output");
      return {
        description: dedent(tool.description),
        inputSchema: input === undefined ? engine.none : JSON.stringify(input),
        outputSchema: output === undefined ? engine.none : JSON.stringify(output),
        effect: typeof effect === "function" ? { tag: "by-input" } : { tag: "fixed", val: effect },
        timeArgs: [...(tool.timeArgs ?? [])],
        hasDryRunResult: typeof tool.dryRunResult === "function",
      };
    },

    effectFor(input: string) {
      // The host validated the input; if it still does not decode, assume
      // the most consequential effect.
      try {
        const effect = tool.effect ?? "write";
        const value = typeof effect === "function" ? effect(parseInput(tool, input)) : effect;
        return EFFECTS.has(value) ? value : "write";
      } catch {
        return "write";
      }
    },

    dryRunResult(input: string) {
      if (typeof tool.dryRunResult !== "function") return engine.none;
      try {
        const result = tool.dryRunResult(parseInput(tool, input));
        if (isThenable(result) || result === undefined || result === null) return engine.none;
        return outputToWit(result);
      } catch {
        return engine.none;
      }
    },

    execute(input: string, ctx: any) {
      let result: unknown;
      try {
        result = tool.execute(parseInput(tool, input), contextFromWit(ctx));
        if (!isThenable(result)) return outputToWit(result);
      } catch (err) {
        throw errorToWit(err);
      }
      if (engine.name === "starlingmonkey") {
        // StarlingMonkey runs its event loop until an export's promise settles.
        return Promise.resolve(result).then(outputToWit, (err) => {
          throw errorToWit(err);
        });
      }
      throw errorToWit(
        new Failed(
          "execute returned a Promise, which the QuickJS engine cannot wait for: make execute synchronous " +
            "(the SDK's kv, fs and http helpers are) or build with --engine starlingmonkey",
        ),
      );
    },
  };
}
