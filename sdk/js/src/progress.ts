import { engine } from "toolhost/engine";

/**
 * Report how far a long call has got (`toolhost:tool/progress`): `done` of
 * `total` (when known), with an optional message. An MCP client that asked
 * for progress sees each report as a progress notification; the HTTP API's
 * session stream a `call.progress` event. `done` must grow from one report
 * to the next; a report that does not, and reports past the host's
 * per-call cap, are dropped.
 */
export function progress(done: number, total?: number, message?: string): void {
  engine.progress.report(done, total ?? engine.none, message ?? engine.none);
}
