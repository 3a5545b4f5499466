import { engine } from "toolhost/engine";
import { decodeUtf8 } from "./utf8.ts";
import { witPayload } from "./errors.ts";
import { dispose } from "./dispose.ts";

/** The session workspace's mount point inside the sandbox. */
export const WORKSPACE = "/workspace";

/** A failed file operation. `code` is the `wasi:filesystem` error code (e.g. `no-entry`). */
export class FsError extends Error {
  readonly code: string;
  readonly path: string;
  constructor(code: string, path: string, message: string) {
    super(message);
    this.code = code;
    this.path = path;
    this.name = "FsError";
  }
  /** Whether the file or folder does not exist. */
  get notFound(): boolean {
    return this.code === "no-entry";
  }
}

/** One entry of a folder listing. */
export interface DirEntry {
  /** The entry's name (not a path). */
  name: string;
  /** `regular-file`, `directory`, `symbolic-link`, … (the `wasi:filesystem` descriptor type). */
  type: string;
}

/** What `stat` says about a file or folder. */
export interface FileStat {
  type: string;
  size: number;
}

let root: any;

function workspaceRoot(path: string): any {
  if (root) return root;
  let dirs: Array<[any, string]> = [];
  try {
    dirs = engine.fsPreopens.getDirectories();
  } catch {
    dirs = [];
  }
  const found = dirs.find(([, name]) => name === WORKSPACE || name === WORKSPACE + "/");
  if (!found) {
    throw new FsError(
      "access",
      path,
      `fs: no workspace: this tool has no \`workspace\` grant (${JSON.stringify(path)} cannot be reached)`,
    );
  }
  root = found[0];
  return root;
}

/**
 * The path relative to the workspace root: `notes/a.md`, `./notes/a.md` and
 * `/workspace/notes/a.md` are the same file. Other absolute paths and `..`
 * components are refused.
 */
export function relativePath(path: string): string {
  let rel = path;
  if (rel === WORKSPACE) rel = ".";
  else if (rel.startsWith(WORKSPACE + "/")) rel = rel.slice(WORKSPACE.length + 1);
  if (rel.startsWith("/")) {
    throw new FsError("invalid", path, `fs: ${JSON.stringify(path)} is outside the workspace (use a relative path)`);
  }
  const parts = rel.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) {
    throw new FsError("invalid", path, `fs: ${JSON.stringify(path)} must not contain \`..\``);
  }
  return parts.length === 0 ? "." : parts.join("/");
}

function fsError(err: unknown, path: string, what: string): FsError {
  if (err instanceof FsError) return err;
  const code = witPayload(err);
  const name = typeof code === "string" ? code : (err as Error)?.message ?? String(err);
  return new FsError(name, path, `fs: cannot ${what} ${JSON.stringify(path)}: ${name}`);
}

function open(path: string, directory: boolean, what: string): any {
  const rel = relativePath(path);
  const dir = workspaceRoot(path);
  try {
    return dir.openAt({ symlinkFollow: true }, rel, { directory }, { read: true });
  } catch (err) {
    throw fsError(err, path, what);
  }
}

/** Reads a whole file from the workspace. */
export function readFile(path: string): Uint8Array {
  const file = open(path, false, "read");
  try {
    let type: string | undefined;
    try {
      type = file.stat().type;
    } catch {}
    if (type === "directory") {
      throw new FsError("is-directory", path, `fs: cannot read ${JSON.stringify(path)}: it is a directory`);
    }
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const [chunk, end] = file.read(engine.int64(64 * 1024), engine.int64(total)) as [Uint8Array, boolean];
      if (chunk.length > 0) {
        chunks.push(chunk instanceof Uint8Array ? chunk : Uint8Array.from(chunk));
        total += chunk.length;
      }
      if (end || chunk.length === 0) break;
    }
    const out = new Uint8Array(total);
    let at = 0;
    for (const chunk of chunks) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  } catch (err) {
    throw fsError(err, path, "read");
  } finally {
    dispose(file);
  }
}

/** Reads a whole file as UTF-8 text (invalid bytes become U+FFFD). */
export function readText(path: string): string {
  return decodeUtf8(readFile(path));
}

/** The entries of a folder (default: the workspace root), sorted by name. */
export function list(path = "."): DirEntry[] {
  const dir = open(path, true, "list");
  try {
    const stream = dir.readDirectory();
    const entries: DirEntry[] = [];
    try {
      for (;;) {
        const entry = stream.readDirectoryEntry();
        if (entry === null || entry === undefined) break;
        entries.push({ name: entry.name, type: entry.type });
      }
    } finally {
      dispose(stream);
    }
    return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch (err) {
    throw fsError(err, path, "list");
  } finally {
    dispose(dir);
  }
}

/** The type and size of a file or folder. */
export function stat(path: string): FileStat {
  const rel = relativePath(path);
  const dir = workspaceRoot(path);
  try {
    const s = dir.statAt({ symlinkFollow: true }, rel);
    return { type: s.type, size: Number(s.size) };
  } catch (err) {
    throw fsError(err, path, "stat");
  }
}

/** Whether a file or folder exists. */
export function exists(path: string): boolean {
  try {
    stat(path);
    return true;
  } catch (err) {
    if (err instanceof FsError && err.notFound) return false;
    throw err;
  }
}

/**
 * Files in the session workspace (mounted at `/workspace`) over
 * `wasi:filesystem`; the tool needs a `workspace` grant. Read-only helpers;
 * use the raw preopen for writes.
 */
export const fs = { readFile, readText, list, stat, exists, relativePath, WORKSPACE, FsError };
