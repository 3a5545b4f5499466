// A call's answer as the console shows it: the envelope's facts, the result
// by content type (text as text, JSON as a tree, images through `blob:`
// URLs, everything else as a download), and the receipt (`usage`).

import { Child, h } from "./dom";

/** Image types shown inline; any other media is offered as a download. */
const SHOWN_IMAGES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/svg+xml"]);

/** The element showing `envelope`, the body of a call's answer. */
export function renderEnvelope(envelope: any): HTMLElement {
  const facts: Child[] = [
    badge(envelope.isError ? "error" : "ok", envelope.isError ? "isError" : "ok"),
    envelope.stubbed ? badge("stubbed", "stubbed (dry run)") : null,
    fact("tool", envelope.toolName),
    fact("call", envelope.callId),
    fact("agent", envelope.agent ? `${envelope.agent.name} v${envelope.agent.version}` : undefined),
    fact("duration", envelope.durationMs !== undefined ? `${envelope.durationMs} ms` : undefined),
    fact("attempts", envelope.attempts),
  ];
  return h(
    "section",
    { class: "envelope" },
    h("div", { class: "facts" }, ...facts),
    h("h3", {}, "Result"),
    h("div", { class: "result" }, renderResult(envelope.result)),
    envelope.trace ? trace(envelope.trace) : null,
    envelope.usage ? h("details", { class: "usage" }, h("summary", {}, "Receipt (usage)"), receipt(envelope.usage)) : null,
  );
}

/** The call's log lines, stdout and stderr. */
function trace(trace: any): HTMLElement {
  const logs = (trace.logs ?? []) as any[];
  return h(
    "details",
    { class: "trace", open: logs.length > 0 || Boolean(trace.stdout) || Boolean(trace.stderr) },
    h("summary", {}, `Trace: ${logs.length} log lines`),
    logs.length ? h("ol", { class: "logs" }, ...logs.map((l) => h("li", {}, h("code", {}, String(l.level ?? "")), " ", String(l.message ?? "")))) : null,
    trace.logsDropped ? h("p", {}, `${trace.logsDropped} more dropped`) : null,
    trace.stdout ? h("div", {}, h("b", {}, "stdout"), h("pre", { class: "text stdout" }, trace.stdout)) : null,
    trace.stderr ? h("div", {}, h("b", {}, "stderr"), h("pre", { class: "text stderr" }, trace.stderr)) : null,
    trace.failure ? h("p", { class: "error" }, trace.failure) : null,
    trace.approvedBy ? h("p", {}, "approved by ", h("code", {}, JSON.stringify(trace.approvedBy))) : null,
  );
}

function badge(kind: string, text: string): HTMLElement {
  return h("span", { class: `badge ${kind}` }, text);
}

function fact(name: string, value: unknown): HTMLElement | null {
  if (value === undefined || value === null) return null;
  return h("span", { class: "fact" }, h("b", {}, `${name} `), String(value));
}

/** A result: text, a content list (`{content, isError}`), or JSON. */
export function renderResult(result: unknown): HTMLElement {
  if (typeof result === "string") return h("pre", { class: "text" }, result);
  if (result && typeof result === "object" && Array.isArray((result as any).content)) {
    return h("div", { class: "blocks" }, ...(result as any).content.map(safeBlock));
  }
  return jsonTree(result);
}

/** A block, or a line saying why it cannot be shown (bad base64, …). */
function safeBlock(block: any): HTMLElement {
  try {
    return renderBlock(block);
  } catch (e) {
    return h("p", { class: "error" }, `A ${String(block?.type)} block cannot be shown: ${(e as Error).message}`);
  }
}

function renderBlock(block: any): HTMLElement {
  switch (block?.type) {
    case "text":
      return h("pre", { class: "text" }, String(block.text ?? ""));
    case "json":
      return jsonTree(block.json);
    case "image":
      if (SHOWN_IMAGES.has(block.mediaType)) {
        return h("img", { class: "image", alt: "image result", src: blobUrl(block.data, block.mediaType) });
      }
      return download(block, "image");
    case "search_result":
      return h("div", { class: "search" }, h("b", {}, String(block.title ?? "")), " ", h("code", {}, String(block.source ?? "")), h("pre", { class: "text" }, String(block.text ?? "")));
    case "resource_link":
      return h("div", { class: "link" }, "resource ", h("code", {}, String(block.uri ?? "")), block.name ? ` (${block.name})` : "");
    case "audio":
    case "document":
      return download(block, block.type);
    default:
      return jsonTree(block);
  }
}

/** A link that saves base64 `block.data` as a file (never opened here). */
function download(block: any, kind: string): HTMLElement {
  const name = typeof block.name === "string" && block.name ? block.name : `${kind}-result`;
  // Saved as bytes: the browser never renders what a tool sent.
  const link = h("a", { href: blobUrl(block.data, "application/octet-stream"), download: name }, `download ${kind}: ${name}`);
  return h("div", { class: "download" }, link, ` (${String(block.mediaType ?? "unknown type")})`);
}

function blobUrl(base64: unknown, type: string): string {
  const text = atob(typeof base64 === "string" ? base64 : "");
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
  return URL.createObjectURL(new Blob([bytes], { type }));
}

/** JSON as a tree of collapsible objects and arrays; leaves as text. */
export function jsonTree(value: unknown, key?: string): HTMLElement {
  const label = key === undefined ? null : h("span", { class: "key" }, `${key}: `);
  if (value === null || typeof value !== "object") {
    return h("div", { class: "leaf" }, label, h("span", { class: `json-${value === null ? "null" : typeof value}` }, JSON.stringify(value) ?? "undefined"));
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  const summary = Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}`;
  return h(
    "details",
    { class: "tree", open: true },
    h("summary", {}, label, summary),
    ...entries.map(([k, v]) => jsonTree(v, k)),
  );
}

function receipt(usage: Record<string, unknown>): HTMLElement {
  return h(
    "table",
    { class: "receipt" },
    ...Object.entries(usage).map(([name, value]) => h("tr", {}, h("th", {}, name), h("td", {}, typeof value === "object" ? JSON.stringify(value) : String(value)))),
  );
}
