/**
 * `ts_journal`: a journal kept in the host's state root (`/state`), shared
 * by every session.
 *
 * The TypeScript twin of `journal` (Rust) and `py_journal` (Python). A call
 * with an `entry` appends it, with the session's id; a call without one
 * reads the latest entries; `export` saves the journal as an artifact of
 * the session; `notify` also sends the entry to a session on the
 * `journal` channel; `laterMs` appends it later, through a reminder that
 * calls this tool. Needs `state = "write"` (and `artifacts = "write"` to
 * export, `metrics = true` to count entries, `sessions = ["journal"]` to
 * notify, `reminders = { tools = ["ts_journal"] }` for `later_ms`) in its
 * grant (a read call gets `/state` read-only whatever it is granted).
 */
import {
  Failed,
  FsError,
  InvalidInput,
  MetricError,
  artifacts,
  defineTool,
  log,
  metrics,
  prompt,
  reminders,
  state,
} from "toolhost";

interface Input {
  entry?: string | null;
  export?: boolean;
  notify?: string | null;
  later_ms?: number | null;
}

const LATEST = 20;

/** Count an entry by the session's channel, and how long its append took (`metrics = true`); the entry stands without them. */
function countEntry(channel: string, seconds: number): void {
  try {
    metrics.counter("journal_entries").add(1, { channel });
    metrics.histogram("journal_append_seconds").record(seconds);
  } catch (err) {
    if (!(err instanceof MetricError)) throw err;
    log.warn(`cannot count the entry: ${err.message}`);
  }
}

export default defineTool<Input>({
  description: prompt`
    Append an entry to the host's journal, or read its latest entries
    (without \`entry\`). The journal is shared by every session; each
    entry records the session that wrote it. With \`export\`, the journal
    is also saved as the session's artifact \`journal.txt\`. With
    \`notify\`, the entry is also sent to that session of the \`journal\`
    channel. With \`later_ms\`, the entry is appended that much later
    (by a reminder) instead of now.
  `,
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    description: "What to add, if anything.",
    type: "object",
    properties: {
      entry: {
        type: ["string", "null"],
        default: null,
        minLength: 1,
        maxLength: 1000,
        description: "A line to append; without one the call only reads.",
      },
      export: {
        type: "boolean",
        default: false,
        description: "Save the journal as the session's artifact `journal.txt`.",
      },
      notify: {
        type: ["string", "null"],
        default: null,
        minLength: 1,
        maxLength: 128,
        description:
          "Also send the entry to the session with this key on the `journal` channel (started if there is none), as a `user.message` event.",
      },
      later_ms: {
        type: ["integer", "null"],
        default: null,
        minimum: 0,
        maximum: 86400000,
        description:
          "Append the entry later instead: a reminder calls this tool with it after this many milliseconds (in a session the server keeps).",
      },
    },
  },
  effect: (input) => (input.entry == null && !input.export && input.notify == null ? "read" : "write"),
  execute(input, ctx) {
    if (input.entry == null) {
      for (const key of ["notify", "later_ms"] as const) {
        if (input[key] != null) throw new InvalidInput(`\`${key}\` is about the entry: give an \`entry\` too`);
      }
    }
    if (input.later_ms != null && input.entry != null) {
      const now: Record<string, unknown> = { entry: input.entry };
      if (input.notify != null) now.notify = input.notify;
      const reminder = reminders.call({ afterMs: input.later_ms }, "ts_journal", now);
      return { reminder: { id: reminder.id, fireAt: reminder.fireAt } };
    }
    if (ctx.stateRoot === undefined) throw new Failed('no state root: grant this tool `state = "write"`');
    const path = "journal.txt";
    if (input.entry != null) {
      const started = Date.now();
      try {
        state.appendFile(path, `${ctx.session.id}\t${input.entry.replace(/[\n\t]/g, " ")}\n`);
      } catch (err) {
        throw new Failed(`cannot append to ${ctx.stateRoot}/${path}: ${(err as Error).message}`);
      }
      countEntry(ctx.session.channel ?? "none", (Date.now() - started) / 1000);
    }
    let text = "";
    try {
      text = state.readText(path);
    } catch (err) {
      if (!(err instanceof FsError && err.notFound)) throw err;
    }
    const lines = text.split("\n").filter((line) => line !== "");
    const latest = lines.slice(-LATEST).map((line) => {
      const tab = line.indexOf("\t");
      return tab < 0 ? { session: "", text: line } : { session: line.slice(0, tab), text: line.slice(tab + 1) };
    });
    const artifact = input.export
      ? artifacts.save("journal.txt", text, { mediaType: "text/plain", tags: ["journal"] }).uri
      : null;
    let notified = null;
    if (input.notify != null && input.entry != null) {
      const sent = ctx.send("journal", input.entry, { key: input.notify });
      notified = {
        sessionId: sent.session.id,
        continuationToken: sent.session.continuationToken,
        started: sent.started,
        eventId: sent.eventId,
      };
    }
    return { stateRoot: ctx.stateRoot, workspaceDir: ctx.workspaceDir ?? null, count: lines.length, latest, artifact, notified };
  },
});
