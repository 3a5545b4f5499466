/**
 * Reminders (`toolhost:tool/reminders`): the SDK page's
 * `ctx.host.reminders`. A reminder comes back to this call's session later,
 * with a message (a `user.message` event) or a call of a tool (through the
 * pipeline, with that tool's permission policy, recorded with origin
 * `reminder(<this call's id>)`).
 *
 * The operator grants them: `reminders = { tools = ["x"] }` in the tool's
 * `[tools.<name>]` schedules messages and calls of `x`. A read call may list
 * them but not schedule or cancel. Only a session the server keeps takes
 * reminders. The host's refusal throws `ReminderError` with its reason.
 *
 * ```ts
 * const soon = reminders.message({ afterMs: 3_600_000 }, "Check the deploy");
 * reminders.call({ at: "2027-01-01T09:00:00Z" }, "report", {});
 * reminders.cancel(soon.id);
 * ```
 */
import { engine } from "toolhost/engine";
import { hostCall } from "./errors.ts";

/** When a reminder fires: at an RFC 3339 instant (with a timezone), or after a delay. */
export type When = { at: string } | { afterMs: number };

/** A pending reminder. */
export interface Reminder {
  /** Its id (`rem_…`). */
  id: string;
  /** The session it fires in. */
  session: string;
  /** When it fires (RFC 3339). */
  fireAt: string;
  /** The message it appends, for a message reminder. */
  message?: string;
  /** The tool it calls and its input, for a call reminder. */
  call?: { tool: string; input: unknown };
  /** The call that scheduled it. */
  scheduledBy: string;
}

/** Why the host did not schedule, list or cancel: not granted, a read call, a tool the grant does not list, an input its schema refuses, a session that ends with the call, too far ahead, or too many pending. */
export class ReminderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ReminderError";
  }
}

function call(op: () => any): any {
  return hostCall(op, (message) => new ReminderError(message));
}

function whenToWit(when: When): any {
  if ("at" in when) return { tag: "at", val: when.at };
  return { tag: "after-ms", val: engine.int64(Math.max(0, when.afterMs)) };
}

function fromWit(raw: any): Reminder {
  const out: Reminder = { id: raw.id, session: raw.session, fireAt: raw.fireAt, scheduledBy: raw.scheduledBy };
  if (raw.action.tag === "message") out.message = raw.action.val;
  else out.call = { tool: raw.action.val.tool, input: JSON.parse(raw.action.val.input) };
  return out;
}

/** Schedule `text` to be appended to this call's session at `when`. */
export function message(when: When, text: string): Reminder {
  return fromWit(call(() => engine.reminders.schedule(whenToWit(when), { tag: "message", val: text })));
}

/** Schedule a call of `tool` with `input` in this call's session at `when`. */
function callTool(when: When, tool: string, input: Record<string, unknown>): Reminder {
  const action = { tag: "call", val: { tool, input: JSON.stringify(input) } };
  return fromWit(call(() => engine.reminders.schedule(whenToWit(when), action)));
}

/** The session's pending reminders, soonest first. */
export function list(): Reminder[] {
  return Array.from(call(() => engine.reminders.listReminders()) as any[]).map(fromWit);
}

/** Cancel the session's pending reminder `id`; false when there is none by that id. */
export function cancel(id: string): boolean {
  return Boolean(call(() => engine.reminders.cancelReminder(id)));
}

/** Reminders in this call's session: `message`, `call`, `list`, `cancel`. */
export const reminders = { message, call: callTool, list, cancel, ReminderError };
