import { engine } from "toolhost/engine";

/** How much a log line matters. */
export type LogLevel = "debug" | "info" | "warn" | "error";

function write(level: LogLevel, message: unknown): void {
  engine.log.log(level, typeof message === "string" ? message : String(message));
}

/**
 * Structured lines in the call's trace (`toolhost:tool/log`); lines past the
 * host's per-call cap are dropped. Unlike stdout/stderr they have a level.
 */
export const log = {
  log: write,
  debug: (message: unknown) => write("debug", message),
  info: (message: unknown) => write("info", message),
  warn: (message: unknown) => write("warn", message),
  error: (message: unknown) => write("error", message),
};
