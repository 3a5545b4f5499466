/**
 * `ts_word_count`: count the lines, words and bytes of a file in the
 * workspace.
 *
 * The TypeScript twin of `word_count` (Rust) and `py_word_count` (Python);
 * one test suite runs all three. Needs `workspace = "read"` in its grant.
 */
import { InvalidInput, decodeUtf8, defineTool, fs, progress, prompt } from "toolhost";

interface Input {
  path: string;
}

// Unicode White_Space, as Rust's `split_whitespace` uses (JS `\s` differs:
// it has U+FEFF and lacks U+0085).
const WHITESPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

export default defineTool<Input>({
  description: prompt`
    Count the lines, words and bytes of a file in the session's workspace,
    like \`wc\`. Lines are newline characters; words are runs of characters
    between whitespace. The path is relative to the workspace.
  `,
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    description: "Which file to count.",
    type: "object",
    properties: {
      path: {
        type: "string",
        minLength: 1,
        description: "The file's path, relative to the workspace (e.g. `notes/todo.md`).",
      },
    },
    required: ["path"],
  },
  effect: "read",
  execute(input) {
    const parts = input.path.split("/");
    if (input.path.startsWith("/") || parts.includes("..")) {
      throw new InvalidInput(
        `path ${JSON.stringify(input.path)} must be relative to the workspace, without \`..\``,
      );
    }
    let bytes: Uint8Array;
    try {
      bytes = fs.readFile(input.path);
    } catch (err) {
      if (err instanceof fs.FsError && err.notFound) {
        throw new InvalidInput(`no file named ${input.path} in the workspace`);
      }
      throw err;
    }
    progress(1, 2, "read the file");
    let lines = 0;
    for (const byte of bytes) if (byte === 0x0a) lines++;
    const words = decodeUtf8(bytes).split(WHITESPACE).filter((word) => word !== "").length;
    progress(2, 2, "counted");
    return { path: input.path, lines, words, bytes: bytes.length };
  },
  prompts: [
    {
      name: "ts_word_count_report",
      description: "Ask for a file's word count, reported briefly or in detail.",
      arguments: [
        { name: "path", description: "The file, relative to the workspace.", required: true },
        { name: "style", description: "`brief` (the default) or `detailed`." },
      ],
      get: ({ path, style = "brief" }) =>
        `Use ts_word_count on \`${path}\` and give a ${style} report of its lines, words and bytes.`,
      complete: (argument, value) =>
        argument === "style" ? ["brief", "detailed"].filter((s) => s.startsWith(value)) : [],
    },
  ],
});
