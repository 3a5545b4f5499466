/**
 * `ts_journal`: a journal kept in the host's state root (`/state`), shared
 * by every session.
 *
 * The TypeScript twin of `journal` (Rust) and `py_journal` (Python). A call
 * with an `entry` appends it, with the session's id; a call without one
 * reads the latest entries; `export` saves the journal as an artifact of
 * the session. Needs `state = "write"` (and `artifacts = "write"` to
 * export, `metrics = true` to count entries) in its grant (a read call gets `/state` read-only whatever it is
 * granted).
 */
import { Failed, FsError, MetricError, artifacts, defineTool, log, metrics, prompt, state } from "toolhost";

interface Input {
  entry?: string | null;
  export?: boolean;
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
    is also saved as the session's artifact \`journal.txt\`.
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
    },
  },
  effect: (input) => (input.entry == null && !input.export ? "read" : "write"),
  execute(input, ctx) {
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
    return { stateRoot: ctx.stateRoot, workspaceDir: ctx.workspaceDir ?? null, count: lines.length, latest, artifact };
  },
});
