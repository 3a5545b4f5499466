/**
 * Write toolhost tools in TypeScript or JavaScript.
 *
 * ```ts
 * import { defineTool, prompt, kv } from "toolhost";
 *
 * export default defineTool({
 *   description: prompt`Add to a named counter and return its new value. ...`,
 *   inputSchema: { type: "object", properties: { name: { type: "string", description: "..." } }, required: ["name"] },
 *   effect: "write",
 *   execute(input) {
 *     return { name: input.name, value: kv.open("default").increment(input.name, 1) };
 *   },
 * });
 * ```
 *
 * Build it into a component with `toolhost build` (QuickJS or StarlingMonkey
 * engine); the project folder's name is the tool's name.
 */
export { defineTool, exportTool } from "./tool.ts";
export { exportPrompts, user, assistant } from "./prompts.ts";
export type { PromptArgument, PromptDefinition, PromptMessage, PromptResult } from "./prompts.ts";
export { exportResources, resourceUpdated } from "./resources.ts";
export type { ResourceContents, ResourceDefinition, ResourceReadResult, ResourceTemplateDefinition } from "./resources.ts";
export type { CallContext, Effect, JsonSchema, Session, Tool, ToolDefinition, ToolResult, ZodLike } from "./tool.ts";
export { ToolError, InvalidInput, Transient, Failed, ResourceNotFound, toToolError } from "./errors.ts";
export type { ToolErrorKind } from "./errors.ts";
export { Output, text, json, image, audio, document, searchResult, resourceLink, isContentBlock } from "./output.ts";
export type { ContentBlock } from "./output.ts";
export { dedent, prompt, unwrap } from "./text.ts";
export { kv, Bucket, KvError } from "./kv.ts";
export type { KvErrorKind } from "./kv.ts";
export { http, HttpError, HttpResponse, DEFAULT_MAX_BODY_BYTES } from "./http.ts";
export type { FetchOptions, HttpErrorKind } from "./http.ts";
export { fs, state, Directory, FsError, WORKSPACE, STATE_ROOT } from "./fs.ts";
export { artifacts, ArtifactError } from "./artifacts.ts";
export { sessions, SessionError } from "./sessions.ts";
export type { SendOptions, Sent, SessionInfo } from "./sessions.ts";
export { reminders, ReminderError } from "./reminders.ts";
export type { Reminder, When } from "./reminders.ts";
export type { Artifact, SaveOptions } from "./artifacts.ts";
export { metrics, Counter, Histogram, MetricError } from "./metrics.ts";
export type { DirEntry, FileStat } from "./fs.ts";
export { log } from "./log.ts";
export { progress } from "./progress.ts";
export { elicit, sample, askAll, roots, AskError } from "./ask.ts";
export type {
  ElicitAnswer,
  KeyedQuestion,
  ModelPreferences,
  ModelQuestion,
  Question,
  Replies,
  Reply,
  ReplyTo,
  Root,
  RootsQuestion,
  SamplingContent,
  SamplingMessage,
  SamplingOptions,
  SamplingResult,
  UserQuestion,
} from "./ask.ts";
export { encodeUtf8, decodeUtf8 } from "./utf8.ts";
export type { LogLevel } from "./log.ts";
export { engine } from "toolhost/engine";
