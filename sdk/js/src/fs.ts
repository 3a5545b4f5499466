import { engine } from "toolhost/engine";
import { decodeUtf8, encodeUtf8 } from "./utf8.ts";
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

/** The host's state root's mount point inside the sandbox (a `state` grant). */
export const STATE_ROOT = "/state";

const roots = new Map<string, any>();

function preopen(mount: string, grant: string, path: string): any {
  const known = roots.get(mount);
  if (known) return known;
  let dirs: Array<[any, string]> = [];
  try {
    dirs = engine.fsPreopens.getDirectories();
  } catch {
    dirs = [];
  }
  const found = dirs.find(([, name]) => name === mount || name === mount + "/");
  if (!found) {
    throw new FsError(
      "access",
      path,
      `fs: no ${mount}: this tool has no \`${grant}\` grant (${JSON.stringify(path)} cannot be reached)`,
    );
  }
  roots.set(mount, found[0]);
  return found[0];
}

/** `path` relative to `mount`: `a`, `./a` and `<mount>/a` are the same file; other absolute paths and `..` are refused. */
function relativeTo(mount: string, path: string): string {
  let rel = path;
  if (rel === mount) rel = ".";
  else if (rel.startsWith(mount + "/")) rel = rel.slice(mount.length + 1);
  if (rel.startsWith("/")) {
    throw new FsError("invalid", path, `fs: ${JSON.stringify(path)} is outside ${mount} (use a relative path)`);
  }
  const parts = rel.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) {
    throw new FsError("invalid", path, `fs: ${JSON.stringify(path)} must not contain \`..\``);
  }
  return parts.length === 0 ? "." : parts.join("/");
}

/**
 * The path relative to the workspace root: `notes/a.md`, `./notes/a.md` and
 * `/workspace/notes/a.md` are the same file. Other absolute paths and `..`
 * components are refused.
 */
export function relativePath(path: string): string {
  return relativeTo(WORKSPACE, path);
}

function fsError(err: unknown, path: string, what: string): FsError {
  if (err instanceof FsError) return err;
  const code = witPayload(err);
  const name = typeof code === "string" ? code : (err as Error)?.message ?? String(err);
  return new FsError(name, path, `fs: cannot ${what} ${JSON.stringify(path)}: ${name}`);
}

/**
 * Files under one preopened directory over `wasi:filesystem`: the session's
 * workspace ([`fs`], a `workspace` grant) or the host's state root
 * ([`state`], a `state` grant). A read call gets either read-only: writes
 * then fail with `FsError` code `read-only` or `not-permitted`.
 */
export class Directory {
  /** Where the directory is mounted, e.g. `/workspace`. */
  readonly mount: string;
  /** The grant that mounts it, for error messages. */
  private readonly grant: string;

  constructor(mount: string, grant: string) {
    this.mount = mount;
    this.grant = grant;
  }

  /** `path` relative to the mount (absolute paths elsewhere and `..` are refused). */
  relative(path: string): string {
    return relativeTo(this.mount, path);
  }

  private root(path: string): any {
    return preopen(this.mount, this.grant, path);
  }

  private open(path: string, directory: boolean, what: string, write = false, create = false, truncate = false): any {
    const rel = this.relative(path);
    const dir = this.root(path);
    try {
      return dir.openAt({ symlinkFollow: true }, rel, { directory, create, truncate }, write ? { write: true } : { read: true });
    } catch (err) {
      throw fsError(err, path, what);
    }
  }

  /** Reads a whole file. */
  readFile(path: string): Uint8Array {
    const file = this.open(path, false, "read");
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
  readText(path: string): string {
    return decodeUtf8(this.readFile(path));
  }

  /** Writes `data` as the whole file, creating it when absent. */
  writeFile(path: string, data: Uint8Array | string): void {
    this.writeAt(path, data, false);
  }

  /** Adds `data` at the end of the file, creating it when absent. */
  appendFile(path: string, data: Uint8Array | string): void {
    this.writeAt(path, data, true);
  }

  private writeAt(path: string, data: Uint8Array | string, append: boolean): void {
    const bytes = typeof data === "string" ? encodeUtf8(data) : data;
    const file = this.open(path, false, "write", true, true, !append);
    try {
      let at = append ? Number(file.stat().size) : 0;
      let done = 0;
      while (done < bytes.length) {
        const chunk = bytes.subarray(done, Math.min(bytes.length, done + 64 * 1024));
        const written = Number(file.write(chunk, engine.int64(at)));
        if (written <= 0) throw new FsError("io", path, `fs: cannot write ${JSON.stringify(path)}: no progress`);
        done += written;
        at += written;
      }
    } catch (err) {
      throw fsError(err, path, "write");
    } finally {
      dispose(file);
    }
  }

  /** The entries of a folder (default: the mount's root), sorted by name. */
  list(path = "."): DirEntry[] {
    const dir = this.open(path, true, "list");
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
  stat(path: string): FileStat {
    const rel = this.relative(path);
    const dir = this.root(path);
    try {
      const s = dir.statAt({ symlinkFollow: true }, rel);
      return { type: s.type, size: Number(s.size) };
    } catch (err) {
      throw fsError(err, path, "stat");
    }
  }

  /** Whether a file or folder exists. */
  exists(path: string): boolean {
    try {
      this.stat(path);
      return true;
    } catch (err) {
      if (err instanceof FsError && err.notFound) return false;
      throw err;
    }
  }
}

const workspace = new Directory(WORKSPACE, "workspace");

/**
 * Files in the session workspace (mounted at `/workspace`); the tool needs
 * a `workspace` grant.
 */
export const fs = {
  readFile: (path: string) => workspace.readFile(path),
  readText: (path: string) => workspace.readText(path),
  writeFile: (path: string, data: Uint8Array | string) => workspace.writeFile(path, data),
  appendFile: (path: string, data: Uint8Array | string) => workspace.appendFile(path, data),
  list: (path?: string) => workspace.list(path),
  stat: (path: string) => workspace.stat(path),
  exists: (path: string) => workspace.exists(path),
  relativePath,
  WORKSPACE,
  FsError,
};

/**
 * Files in the host's durable state root (mounted at `/state`), shared by
 * every session and every tool granted it; the tool needs a `state` grant.
 */
export const state = new Directory(STATE_ROOT, "state");
