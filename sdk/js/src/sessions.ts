/**
 * Sessions on channels (`toolhost:tool/sessions`): the SDK page's
 * `ctx.send` and `ctx.getSession`.
 *
 * The operator grants channels: `sessions = ["support", "ops-*"]` in the
 * tool's `[tools.<name>]`. A read call may look sessions up but not send.
 * A send appends a `user.message` event to the session (started or
 * resumed); the application reading the session's event stream acts on it.
 * Sessions are kept by `toolhost serve` and `toolhost mcp`: a one-shot
 * `tool call` has none. The host's refusal throws `SessionError` with its
 * reason.
 *
 * ```ts
 * const sent = ctx.send("support", "The build is green", { key: "ticket-42" });
 * log.info(`told ${sent.session.continuationToken} (event ${sent.eventId})`);
 * ```
 */
import { engine } from "toolhost/engine";
import { hostCall } from "./errors.ts";

/** A session on a channel. */
export interface SessionInfo {
  id: string;
  channel: string;
  key: string;
  /** `<channel>:<key>`, what a client passes as `continuationToken`. */
  continuationToken: string;
  mode: "live" | "dry-run";
  /** When it was created (RFC 3339). */
  createdAt: string;
  /** When a call or a message last used it (RFC 3339). */
  lastActive: string;
}

/** Which session a message goes to, and on whose behalf. Neither `sessionId` nor `key`: a new session. */
export interface SendOptions {
  /** Resume this session (it must be on the channel). */
  sessionId?: string;
  /** Start or resume the session `<channel>:<key>`. */
  key?: string;
  /** The principal to send as (a JSON object); this call's session's principal when absent. */
  auth?: Record<string, unknown>;
}

/** What a send did. */
export interface Sent {
  session: SessionInfo;
  /** Whether the send started the session. */
  started: boolean;
  /** The `user.message` event's id in the session's event stream. */
  eventId: number;
}

/** Why the host did not look up or send: not granted for the channel, a read call, no sessions on this host, another principal's session, a message too large, or too many sends. */
export class SessionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SessionError";
  }
}

function call(op: () => any): any {
  return hostCall(op, (message) => new SessionError(message));
}

function fromWit(raw: any): SessionInfo {
  return {
    id: raw.id,
    channel: raw.channel,
    key: raw.key,
    continuationToken: raw.continuationToken,
    mode: raw.mode,
    createdAt: raw.createdAt,
    lastActive: raw.lastActive,
  };
}

/** Start or resume a session on `channel` and append `message` to it. */
export function send(channel: string, message: string, options: SendOptions = {}): Sent {
  const none = engine.none;
  const raw = call(() =>
    engine.sessions.send(channel, message, {
      sessionId: options.sessionId ?? none,
      key: options.key ?? none,
      auth: options.auth === undefined ? none : JSON.stringify(options.auth),
    }),
  );
  return { session: fromWit(raw.session), started: raw.started, eventId: Number(raw.eventId) };
}

/** The session `id` on `channel`, if there is one this call's principal may use. */
export function getSession(channel: string, id: string): SessionInfo | undefined {
  const found = call(() => engine.sessions.getSession(channel, id));
  return found === null || found === undefined ? undefined : fromWit(found);
}

/** Sessions on channels: `send`, `getSession`. */
export const sessions = { send, getSession, SessionError };
