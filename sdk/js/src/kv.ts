import { engine } from "toolhost/engine";
import { decodeUtf8, encodeUtf8 } from "./utf8.ts";
import { witPayload } from "./errors.ts";

/** Why a key-value operation failed. */
export type KvErrorKind = "no-such-store" | "access-denied" | "other";

/** A failed key-value operation (`wasi:keyvalue`). Uncaught, it fails the call. */
export class KvError extends Error {
  readonly kind: KvErrorKind;
  constructor(kind: KvErrorKind, message: string) {
    super(message);
    this.kind = kind;
    this.name = "KvError";
  }
}

function kvError(err: unknown, bucket: string): KvError {
  const payload = witPayload(err);
  switch (payload?.tag) {
    case "no-such-store":
      return new KvError("no-such-store", `key-value: no such bucket ${JSON.stringify(bucket)}`);
    case "access-denied":
      return new KvError(
        "access-denied",
        `key-value: access denied to bucket ${JSON.stringify(bucket)} (the bucket is not granted ` +
          `to this tool, or this call may not write)`,
      );
    case "other":
      return new KvError("other", `key-value: ${payload.val}`);
    default:
      return new KvError("other", `key-value: ${err instanceof Error ? err.message : String(err)}`);
  }
}


/** An open bucket: a named collection of keys and byte values. */
export class Bucket {
  readonly name: string;
  /** The raw `wasi:keyvalue/store` bucket, for batch and compare-and-swap calls. */
  readonly raw: any;

  constructor(name: string, raw: any) {
    this.name = name;
    this.raw = raw;
  }

  private call<T>(f: () => T): T {
    try {
      return f();
    } catch (err) {
      throw kvError(err, this.name);
    }
  }

  /** The value of `key`, or `undefined` when it is absent. */
  get(key: string): Uint8Array | undefined {
    const value = this.call(() => this.raw.get(key));
    if (value === null || value === undefined) return undefined;
    return value instanceof Uint8Array ? value : Uint8Array.from(value);
  }
  /** The value of `key` as UTF-8 text, or `undefined` when it is absent. */
  getText(key: string): string | undefined {
    const value = this.get(key);
    return value === undefined ? undefined : decodeUtf8(value);
  }
  /** The value of `key` decoded from JSON, or `undefined` when it is absent. */
  getJson<T = unknown>(key: string): T | undefined {
    const value = this.getText(key);
    if (value === undefined) return undefined;
    try {
      return JSON.parse(value) as T;
    } catch (err) {
      throw new KvError("other", `value of ${JSON.stringify(key)} is not valid JSON: ${(err as Error).message}`);
    }
  }
  /** Sets `key` to `value` (text is stored as UTF-8), replacing any previous value. */
  set(key: string, value: string | Uint8Array): void {
    const bytes = typeof value === "string" ? encodeUtf8(value) : value;
    this.call(() => this.raw.set(key, bytes));
  }
  /** Sets `key` to `value` encoded as JSON. */
  setJson(key: string, value: unknown): void {
    this.set(key, JSON.stringify(value));
  }
  /** Removes `key`; removing an absent key is not an error. */
  delete(key: string): void {
    this.call(() => this.raw.delete(key));
  }
  /** Whether `key` is present. */
  exists(key: string): boolean {
    return this.call(() => this.raw.exists(key));
  }
  /**
   * Atomically adds `delta` (default 1) to the signed 64-bit integer at `key`
   * (absent counts as 0) and returns the new value.
   */
  increment(key: string, delta = 1): number {
    if (!Number.isInteger(delta)) throw new TypeError(`increment: delta must be an integer, not ${delta}`);
    const value = this.call(() => engine.kvAtomics.increment(this.raw, key, engine.int64(delta)));
    return Number(value);
  }
  /** Every key in the bucket (follows the store's pages). */
  keys(): string[] {
    const keys: string[] = [];
    let cursor: string | null | undefined = engine.none;
    for (;;) {
      const page = this.call(() => this.raw.listKeys(cursor));
      keys.push(...page.keys);
      const next = page.cursor;
      if (next === null || next === undefined || next === cursor) return keys;
      cursor = next;
    }
  }
}

/** Key-value buckets over `wasi:keyvalue`: `kv.open("default")`. */
export const kv = {
  /** Opens the bucket `name`; only buckets granted in `toolhost.toml` open. */
  open(name: string): Bucket {
    let raw;
    try {
      raw = engine.kvStore.open(name);
    } catch (err) {
      throw kvError(err, name);
    }
    return new Bucket(name, raw);
  },
};
