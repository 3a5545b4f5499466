/**
 * Files a call leaves for the user: artifacts of its session
 * (`toolhost:tool/artifacts`), the SDK page's `ctx.artifacts`.
 *
 * The operator grants them: `artifacts = "write"` in the tool's
 * `[tools.<name>]` saves and lists, `"read"` only lists; a read call only
 * lists. The host fills in the session. Clients download an artifact over
 * the HTTP API, read it as an MCP resource (its `uri`), and see an
 * `artifact.created` event. The host's refusal throws `ArtifactError` with
 * its reason.
 *
 * ```ts
 * const saved = artifacts.save("report.md", "# Report\n", { mediaType: "text/markdown", tags: ["report"] });
 * artifacts.saveFile("build.tar.gz", "/workspace/out/build.tar.gz", { mediaType: "application/gzip" });
 * ```
 */
import { engine } from "toolhost/engine";
import { hostCall } from "./errors.ts";
import { encodeUtf8 } from "./utf8.ts";

/** An artifact as stored. */
export interface Artifact {
  name: string;
  mediaType: string;
  size: number;
  tags: string[];
  /** The session it belongs to. */
  session: string;
  /** When it was saved (RFC 3339). */
  createdAt: string;
  /** Its address for MCP clients (`toolhost://sessions/<id>/artifacts/<name>`). */
  uri: string;
}

/** How to save an artifact. */
export interface SaveOptions {
  /** Its IANA media type (default `application/octet-stream`). */
  mediaType?: string;
  /** Labels for finding it (at most 16). */
  tags?: string[];
}

/** Why the host did not save or list: not granted, a read call, a bad name, media type or tag, or the session's bytes used up. */
export class ArtifactError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ArtifactError";
  }
}


function fromWit(raw: any): Artifact {
  return {
    name: raw.name,
    mediaType: raw.mediaType,
    size: Number(raw.size),
    tags: Array.from(raw.tags ?? []),
    session: raw.session,
    createdAt: raw.createdAt,
    uri: raw.uri,
  };
}

function call(op: () => any): any {
  return hostCall(op, (message) => new ArtifactError(message));
}

/** Save `data` (a string is UTF-8) as the artifact `name` of the call's session, replacing one of that name. */
export function save(name: string, data: Uint8Array | string, options: SaveOptions = {}): Artifact {
  const bytes = typeof data === "string" ? encodeUtf8(data) : data;
  const mediaType = options.mediaType ?? "application/octet-stream";
  return fromWit(call(() => engine.artifacts.save(name, mediaType, bytes, options.tags ?? [])));
}

/**
 * Save the file at `path` (under `/workspace` or `/state`, or relative to
 * the workspace) as the artifact `name`; the host reads it, so a large file
 * never passes through the tool's memory.
 */
export function saveFile(name: string, path: string, options: SaveOptions = {}): Artifact {
  const mediaType = options.mediaType ?? "application/octet-stream";
  return fromWit(call(() => engine.artifacts.saveFile(name, path, mediaType, options.tags ?? [])));
}

/** The session's artifacts, by name. */
export function list(): Artifact[] {
  return Array.from(call(() => engine.artifacts.listArtifacts()) as any[]).map(fromWit);
}

/** The session's artifacts: `save`, `saveFile`, `list`. */
export const artifacts = { save, saveFile, list, ArtifactError };
