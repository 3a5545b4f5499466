// A session's event stream read with fetch() (EventSource cannot send
// `Authorization` or a first `Last-Event-ID`), parsed as server-sent
// events: `id:`, `event:` and `data:` lines, a blank line ending each.

import { Api } from "./api";

/** One server-sent event. */
export interface StreamEvent {
  id: string | null;
  type: string;
  data: string;
}

/** Splits server-sent events out of text as it arrives. */
export class SseParser {
  private buffer = "";
  private id: string | null = null;
  private type = "message";
  private data: string[] = [];

  /** Feed `chunk`; the events it completes. */
  push(chunk: string): StreamEvent[] {
    this.buffer += chunk;
    const events: StreamEvent[] = [];
    let newline: number;
    while ((newline = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      // A `\r` at the end may be half of a `\r\n` the next chunk ends.
      if (newline === this.buffer.length - 1 && this.buffer.endsWith("\r")) break;
      const line = this.buffer.slice(0, newline);
      const width = this.buffer.startsWith("\r\n", newline) ? 2 : 1;
      this.buffer = this.buffer.slice(newline + width);
      if (line === "") {
        if (this.data.length) events.push({ id: this.id, type: this.type, data: this.data.join("\n") });
        this.type = "message";
        this.data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "id") this.id = value;
      else if (field === "event") this.type = value;
      else if (field === "data") this.data.push(value);
    }
    return events;
  }
}

/** Follow session `id`'s events (replayed from the start) until `stop`
 * aborts, calling `seen` with each; reconnects after a drop, resuming
 * from the last event with `Last-Event-ID`. */
export async function followEvents(
  api: Api,
  id: string,
  seen: (event: StreamEvent) => void,
  stop: AbortSignal,
): Promise<void> {
  let last: string | null = null;
  while (!stop.aborted) {
    try {
      const headers: Record<string, string> = { accept: "text/event-stream" };
      if (last !== null) headers["last-event-id"] = last;
      const response = await api.raw(`/sessions/${encodeURIComponent(id)}/events`, headers, stop);
      if (!response.ok || !response.body) return;
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const event of parser.push(value)) {
          if (event.id !== null) last = event.id;
          seen(event);
        }
      }
    } catch (e) {
      if (stop.aborted) return;
      if (e instanceof Error && e.name !== "TypeError") throw e;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
