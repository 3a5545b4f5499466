/**
 * `ts_counter`: a named counter kept in the `default` key-value bucket.
 *
 * The TypeScript twin of `counter` (Rust); one test suite runs both.
 * Needs `kv = ["default"]` in the tool's grant. Each counter is also a
 * resource for MCP clients, `ts-counter://{name}` (its value as text); a
 * call tells the clients subscribed to the counter's address that it changed.
 */
import { defineTool, kv, log, prompt, ResourceNotFound, resourceUpdated } from "toolhost";

interface Input {
  name: string;
  by: number;
}

export default defineTool<Input>({
  description: prompt`
    Add to a named counter and return its new value. Counters start at 0
    and are shared by every session of this host.
  `,
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    description: "Which counter to bump, and by how much.",
    type: "object",
    properties: {
      name: {
        type: "string",
        minLength: 1,
        maxLength: 256,
        description: "The counter's name (its key in the bucket).",
      },
      by: {
        type: "integer",
        format: "int64",
        default: 1,
        description: "How much to add; negative to subtract.",
      },
    },
    required: ["name"],
  },
  effect: "write",
  dryRunResult: (input) => ({ name: input.name, value: null, dryRun: true }),
  execute(input) {
    const value = kv.open("default").increment(input.name, input.by);
    try {
      resourceUpdated(`ts-counter://${encodeURIComponent(input.name)}`);
    } catch (err) {
      // E.g. a name too long for an address; the count stands.
      log.warn(`cannot announce the counter's resource: ${(err as Error).message}`);
    }
    return { name: input.name, value };
  },
  resourceTemplates: [
    {
      uriTemplate: "ts-counter://{name}",
      name: "counter",
      description: "A counter's value.",
      mimeType: "text/plain",
      read({ name = "" }) {
        const value = kv.open("default").getText(name);
        if (value === undefined) throw new ResourceNotFound();
        return value;
      },
    },
  ],
});
