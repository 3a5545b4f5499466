/**
 * Why a call failed. Throw one of the subclasses from `execute`; the message
 * reaches the caller and the session goes on. Any other exception becomes a
 * `failed` error with its message (never a trap).
 */
export type ToolErrorKind = "invalid-input" | "transient" | "failed";

/** Base class of the errors a tool throws to end a call. */
export class ToolError extends Error {
  readonly kind: ToolErrorKind;
  constructor(kind: ToolErrorKind, message: string) {
    super(message);
    this.kind = kind;
    this.name = new.target.name;
  }
}

/** The input was well-formed but unusable; the message says why. */
export class InvalidInput extends ToolError {
  constructor(message: string) {
    super("invalid-input", message);
  }
}

/**
 * A passing failure: read and idempotent calls are tried again, up to three
 * attempts in all, each in a fresh instance.
 */
export class Transient extends ToolError {
  constructor(message: string) {
    super("transient", message);
  }
}

/** Any other failure; not retried. */
export class Failed extends ToolError {
  constructor(message: string) {
    super("failed", message);
  }
}

/**
 * Nothing is at the address a resource read was asked for (now): throw it
 * from a resource's `read`. MCP clients get "resource not found"; the
 * message is not sent.
 */
export class ResourceNotFound extends Error {
  constructor(message = "resource not found") {
    super(message);
    this.name = "ResourceNotFound";
  }
}

/**
 * The host did not ask the user, the model or the client for its roots
 * (`elicit`, `sample`, `askAll`, `roots`), or no answer came: the message
 * says why (not granted, a surface that cannot ask, a schema that is not a
 * flat form, too many calls waiting, no answer in time). Uncaught, it fails
 * the call with its message.
 */
export class AskError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AskError";
  }
}

/** The message of anything thrown. */
export function messageOf(err: unknown): string {
  if (err instanceof Error) return err.message || err.name;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/**
 * Converts anything thrown into a tool error. SDK errors that know whether
 * they may pass (HTTP timeouts, refused connections) become `transient`.
 */
export function toToolError(err: unknown): ToolError {
  if (err instanceof ToolError) return err;
  if (err && typeof err === "object" && (err as any).transient === true) {
    return new Transient(messageOf(err));
  }
  return new Failed(messageOf(err));
}

/** The engine error's payload: bindings throw an Error whose `payload` is the WIT error value. */
export function witPayload(err: unknown): any {
  if (err && typeof err === "object" && "payload" in err) return (err as any).payload;
  return err;
}

/** What a host interface refused with (its string error), or the engine's message. */
export function refusalOf(err: unknown): string {
  const payload = witPayload(err);
  return typeof payload === "string" ? payload : messageOf(err);
}

/** `op()`, a host refusal thrown as the helper's own error, made by `refused`. */
export function hostCall<T>(op: () => T, refused: (message: string) => Error): T {
  try {
    return op();
  } catch (err) {
    throw refused(refusalOf(err));
  }
}
