/**
 * Removes the indentation that a multi-line literal picks up from the code
 * around it (like Python's `inspect.cleandoc`, and the Rust SDK's `dedent`):
 * leading whitespace is stripped from the first line; the smallest
 * indentation of the later non-blank lines is removed from each of them;
 * leading and trailing blank lines are dropped, as is trailing whitespace on
 * every line. Line endings become `\n`.
 */
export function dedent(text: string): string {
  const lines = text.split(/\r\n|\n|\r/).map((line) => line.replace(/\s+$/, ""));
  let indent = Infinity;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === "") continue;
    const lead = line.length - line.replace(/^[ \t]+/, "").length;
    indent = Math.min(indent, lead);
  }
  if (indent === Infinity) indent = 0;
  const out = lines.map((line, i) => (i === 0 ? line.replace(/^\s+/, "") : line.slice(indent)));
  let first = 0;
  while (first < out.length && out[first] === "") first++;
  let last = out.length - 1;
  while (last >= first && out[last] === "") last--;
  return out.slice(first, last + 1).join("\n");
}

const BLOCK_START = /^(\s|[-*+] |\d+[.)] |```|~~~|>|#|\|)/;

/**
 * Joins hard-wrapped lines into paragraphs: consecutive lines of a
 * paragraph become one line. Blank lines, list items, indented lines,
 * headings, quotes, tables and fenced code blocks keep their breaks.
 */
export function unwrap(text: string): string {
  const out: string[] = [];
  let fenced = false;
  let joinable = false;
  for (const line of text.split("\n")) {
    const fence = /^(```|~~~)/.test(line);
    if (fenced || fence) {
      out.push(line);
      if (fence) fenced = !fenced;
      joinable = false;
      continue;
    }
    if (line === "") {
      out.push(line);
      joinable = false;
      continue;
    }
    if (joinable && !BLOCK_START.test(line)) {
      out[out.length - 1] += " " + line;
    } else {
      out.push(line);
    }
    // A heading or table row stands alone; anything else may continue.
    joinable = !/^(#|\|)/.test(line);
  }
  return out.join("\n");
}

/**
 * Text for the model, written as an indented literal: `dedent`, then
 * `unwrap` (hard-wrapped lines become paragraphs). Works as a tagged
 * template (values are interpolated before dedenting) or as a function:
 *
 * ```ts
 * prompt`
 *   Add to a named counter and return its new value. Counters start at 0
 *   and are shared by every session of this host.
 * `
 * // "Add to a named counter ... Counters start at 0 and are shared by ..."
 * ```
 */
export function prompt(text: string): string;
export function prompt(strings: TemplateStringsArray, ...values: unknown[]): string;
export function prompt(strings: string | TemplateStringsArray, ...values: unknown[]): string {
  let text: string;
  if (typeof strings === "string") {
    text = strings;
  } else {
    text = strings[0] ?? "";
    for (let i = 0; i < values.length; i++) {
      text += String(values[i]) + (strings[i + 1] ?? "");
    }
  }
  return unwrap(dedent(text));
}
