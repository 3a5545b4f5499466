import { engine } from "toolhost/engine";
import { decodeUtf8, encodeUtf8 } from "./utf8.ts";
import { witPayload } from "./errors.ts";
import { dispose } from "./dispose.ts";

/** How many response-body bytes `http.fetch` keeps by default (10 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024;

/** What kind of failure an `HttpError` is. */
export type HttpErrorKind = "denied" | "invalid-request" | "timeout" | "connection" | "protocol" | "other";

/**
 * Why an HTTP request failed; the message names the request and the cause.
 * Uncaught, a transient one (timeout, refused or dropped connection) makes
 * the call `transient`, any other `failed`.
 */
export class HttpError extends Error {
  readonly kind: HttpErrorKind;
  readonly transient: boolean;
  constructor(kind: HttpErrorKind, message: string, transient = kind === "timeout") {
    super(message);
    this.kind = kind;
    this.transient = transient;
    this.name = "HttpError";
  }
  /** Whether the host refused the request (not granted). */
  get denied(): boolean {
    return this.kind === "denied";
  }
}

/** Options of `http.fetch`. */
export interface FetchOptions {
  /** `GET` (default), `POST`, … */
  method?: string;
  /** Request headers; repeat a name with an array of pairs. */
  headers?: Record<string, string> | Array<[string, string]>;
  /** The request body (text is sent as UTF-8). */
  body?: string | Uint8Array;
  /** Give up when connecting, waiting for the first byte or between bytes takes longer. */
  timeoutMs?: number;
  /** Keep at most this many body bytes (default 10 MiB); the rest is not read. */
  maxBodyBytes?: number;
}

/** An HTTP response with its body read (up to the cap). */
export class HttpResponse {
  constructor(
    /** The status code, e.g. 200. */
    readonly status: number,
    /** The headers in the order received (values decoded as UTF-8). */
    readonly headerList: Array<[string, string]>,
    /** The body, at most `maxBodyBytes`. */
    readonly body: Uint8Array,
    /** Whether the body was longer than the cap (the rest was not read). */
    readonly truncated: boolean,
  ) {}
  /** Headers by lower-case name; repeated headers joined with `, `. */
  get headers(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, value] of this.headerList) {
      const key = name.toLowerCase();
      out[key] = key in out ? `${out[key]}, ${value}` : value;
    }
    return out;
  }
  /** The first value of header `name` (case-insensitive). */
  header(name: string): string | undefined {
    const lower = name.toLowerCase();
    return this.headerList.find(([key]) => key.toLowerCase() === lower)?.[1];
  }
  /** Whether the status is 2xx. */
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }
  /** Whether the status is a redirect with a `Location` header. */
  get isRedirect(): boolean {
    return [301, 302, 303, 307, 308].includes(this.status) && this.header("location") !== undefined;
  }
  /** The body as text (invalid UTF-8 replaced). */
  text(): string {
    return decodeUtf8(this.body);
  }
  /** The body decoded from JSON. */
  json<T = unknown>(): T {
    try {
      return JSON.parse(this.text()) as T;
    } catch (err) {
      throw new HttpError("protocol", `response body is not the expected JSON: ${(err as Error).message}`);
    }
  }
}

interface Parts {
  scheme: string;
  authority: string;
  path: string;
  query: string;
}

function split(url: string): Parts | undefined {
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(url)) return undefined;
  const noFragment = url.split("#")[0]!;
  const at = noFragment.indexOf("://");
  if (at < 0) return undefined;
  const scheme = noFragment.slice(0, at);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*$/.test(scheme)) return undefined;
  const rest = noFragment.slice(at + 3);
  const authorityEnd = rest.search(/[/?]/);
  const authority = authorityEnd < 0 ? rest : rest.slice(0, authorityEnd);
  const tail = authorityEnd < 0 ? "" : rest.slice(authorityEnd);
  const queryStart = tail.indexOf("?");
  return {
    scheme,
    authority,
    path: queryStart < 0 ? tail : tail.slice(0, queryStart),
    query: queryStart < 0 ? "" : tail.slice(queryStart),
  };
}

function removeDotSegments(path: string): string {
  const out: string[] = [];
  const segments = path.split("/");
  const last = segments.length - 1;
  segments.forEach((segment, i) => {
    if (segment === "." || segment === "..") {
      if (segment === ".." && out.length > 1) out.pop();
      if (i === last) out.push("");
    } else {
      out.push(segment);
    }
  });
  const joined = out.join("/");
  return joined.startsWith("/") ? joined : `/${joined}`;
}

/**
 * Resolves a `Location` header (or any reference) against the URL it came
 * from, per RFC 3986 (fragments dropped).
 */
export function resolve(base: string, reference: string): string {
  const invalid = (what: string) =>
    new HttpError("invalid-request", `cannot resolve ${JSON.stringify(reference)} against ${JSON.stringify(base)}: ${what}`);
  const baseParts = split(base);
  if (!baseParts) throw invalid("the base is not an absolute URL");
  let ref = reference.trim();
  if (/[\s\u0000-\u001f\u007f-\u009f]/.test(ref)) throw invalid("the reference contains whitespace");
  ref = ref.split("#")[0]!;
  const parts = split(ref);
  if (parts) return `${parts.scheme}://${parts.authority}${removeDotSegments(parts.path)}${parts.query}`;
  const origin = `${baseParts.scheme}://${baseParts.authority}`;
  if (ref.startsWith("//")) return resolve(base, `${baseParts.scheme}:${ref}`);
  const q = ref.indexOf("?");
  const refPath = q < 0 ? ref : ref.slice(0, q);
  const refQuery = q < 0 ? "" : ref.slice(q);
  const basePath = baseParts.path === "" ? "/" : baseParts.path;
  if (refPath === "") return `${origin}${basePath}${refQuery === "" ? baseParts.query : refQuery}`;
  if (refPath.startsWith("/")) return `${origin}${removeDotSegments(refPath)}${refQuery}`;
  const dir = basePath.slice(0, basePath.lastIndexOf("/") + 1);
  return `${origin}${removeDotSegments(dir + refPath)}${refQuery}`;
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]);

function methodOf(name: string): any {
  const upper = name.toUpperCase();
  return METHODS.has(upper) ? { tag: upper.toLowerCase() } : { tag: "other", val: name };
}

const DENIED =
  "refused by the host: the origin is not in this tool's `http` grant, the method is not allowed " +
  "for this call's effect (read calls may only GET and HEAD), or the call used up its request " +
  "allowance; the call's trace says which";

/** The error code's WIT name with its payload, e.g. `connection-refused`. */
function describe(code: any): string {
  const tag = String(code?.tag ?? code).toLowerCase();
  const val = code?.val;
  if (tag === "dns-error" && val?.rcode) return `dns-error: ${val.rcode}`;
  if (tag === "internal-error" && typeof val === "string") return `internal-error: ${val}`;
  if (tag === "http-response-body-size" && val !== undefined && val !== null) return `${tag}: ${val} bytes`;
  return tag;
}

function fromCode(context: string, code: any): HttpError {
  const tag = String(code?.tag ?? code).toLowerCase();
  let kind: HttpErrorKind;
  let what = describe(code);
  if (tag === "http-request-denied") {
    kind = "denied";
    what = DENIED;
  } else if (tag === "destination-ip-prohibited") {
    kind = "denied";
    what = "refused by the host: the destination address is not allowed";
  } else if (["http-request-method-invalid", "http-request-uri-invalid", "http-request-uri-too-long"].includes(tag)) {
    kind = "invalid-request";
  } else if (
    ["dns-timeout", "connection-timeout", "connection-read-timeout", "connection-write-timeout", "http-response-timeout"].includes(tag)
  ) {
    kind = "timeout";
  } else if (
    [
      "dns-error",
      "destination-not-found",
      "destination-unavailable",
      "destination-ip-unroutable",
      "connection-refused",
      "connection-terminated",
      "connection-limit-reached",
    ].includes(tag)
  ) {
    kind = "connection";
  } else if (tag === "internal-error" || tag === "configuration-error") {
    kind = "other";
  } else {
    kind = "protocol";
  }
  const transient =
    kind === "timeout" ||
    ["dns-error", "destination-unavailable", "connection-refused", "connection-terminated", "connection-limit-reached"].includes(tag);
  return new HttpError(kind, `${context}: ${what}`, transient);
}

function fromStream(context: string, err: unknown): HttpError {
  const payload = witPayload(err);
  if (payload?.tag === "closed") return new HttpError("connection", `${context}: connection closed early`, true);
  if (payload?.tag === "last-operation-failed") {
    const io = payload.val;
    let code: any;
    try {
      code = engine.httpTypes.httpErrorCode(io);
    } catch {
      code = undefined;
    }
    if (code !== undefined && code !== null) return fromCode(context, code);
    let text = "stream error";
    try {
      text = io.toDebugString();
    } catch {}
    return new HttpError("other", `${context}: ${text}`);
  }
  return new HttpError("other", `${context}: ${err instanceof Error ? err.message : String(err)}`);
}

/**
 * Sends a request over `wasi:http/outgoing-handler` and reads the response,
 * keeping at most `maxBodyBytes` of its body. Works on both engines.
 *
 * The host lets a tool reach only the origins its grant lists; a call whose
 * effect is `read` may only GET and HEAD. Redirects are not followed: a 3xx
 * comes back as it is (see `resolve` and `HttpResponse.isRedirect`).
 */
export function fetch(url: string, options: FetchOptions = {}): HttpResponse {
  const method = options.method ?? "GET";
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const context = `${method} ${url}`;
  const fail = (kind: HttpErrorKind, what: string) => new HttpError(kind, `${context}: ${what}`);

  const parts = split(url);
  if (!parts) throw new HttpError("invalid-request", `${JSON.stringify(url)} is not an absolute http or https URL`);
  const scheme = parts.scheme.toLowerCase();
  if (scheme !== "http" && scheme !== "https") {
    throw new HttpError("invalid-request", `${JSON.stringify(url)}: unsupported scheme ${JSON.stringify(scheme)} (use http or https)`);
  }
  if (parts.authority === "" || parts.authority.includes("@")) {
    throw new HttpError("invalid-request", `${JSON.stringify(url)}: the URL needs a host (and no user info)`);
  }
  const pathWithQuery = (parts.path === "" ? "/" : parts.path) + parts.query;

  const T = engine.httpTypes;
  const headers = new T.Fields();
  const headerPairs = Array.isArray(options.headers) ? options.headers : Object.entries(options.headers ?? {});
  for (const [name, value] of headerPairs) {
    try {
      headers.append(name, encodeUtf8(String(value)));
    } catch (err) {
      throw fail("invalid-request", `header ${JSON.stringify(name)}: ${JSON.stringify(witPayload(err))}`);
    }
  }
  const request = new T.OutgoingRequest(headers);
  const check = (f: () => void, what: string) => {
    try {
      f();
    } catch {
      throw fail("invalid-request", what);
    }
  };
  check(() => request.setMethod(methodOf(method)), "invalid method");
  check(() => request.setScheme({ tag: scheme === "https" ? "HTTPS" : "HTTP" }), "invalid scheme");
  check(() => request.setAuthority(parts.authority), "invalid host or port");
  check(() => request.setPathWithQuery(pathWithQuery), "invalid path");
  let outgoingBody: any;
  try {
    outgoingBody = request.body();
  } catch {
    throw fail("other", "request body unavailable");
  }

  let requestOptions: any = engine.none;
  if (options.timeoutMs !== undefined) {
    const nanos = engine.int64(Math.max(0, options.timeoutMs) * 1e6);
    requestOptions = new T.RequestOptions();
    // A host that does not support a timeout refuses it; its own limits still apply.
    for (const set of ["setConnectTimeout", "setFirstByteTimeout", "setBetweenBytesTimeout"]) {
      try {
        requestOptions[set](nanos);
      } catch {}
    }
  }

  let pending: any;
  try {
    pending = engine.httpOutgoing.handle(request, requestOptions);
  } catch (err) {
    throw fromCode(context, witPayload(err));
  }

  if (options.body !== undefined) {
    const bytes = typeof options.body === "string" ? encodeUtf8(options.body) : options.body;
    let stream: any;
    try {
      stream = outgoingBody.write();
    } catch {
      throw fail("other", "request body stream unavailable");
    }
    try {
      // `blocking-write-and-flush` takes at most 4096 bytes a call.
      for (let at = 0; at < bytes.length; at += 4096) {
        stream.blockingWriteAndFlush(bytes.subarray(at, at + 4096));
      }
    } catch (err) {
      throw fromStream(context, err);
    } finally {
      dispose(stream);
    }
  }
  try {
    T.OutgoingBody.finish(outgoingBody, engine.none);
  } catch (err) {
    throw fromCode(context, witPayload(err));
  }

  let result: any;
  for (;;) {
    result = pending.get();
    if (result !== null && result !== undefined) break;
    const pollable = pending.subscribe();
    pollable.block();
    dispose(pollable);
  }
  if (result.tag !== "ok") throw fail("other", "response already taken");
  if (result.val.tag !== "ok") throw fromCode(context, result.val.val);
  const response = result.val.val;

  const status = response.status();
  const fields = response.headers();
  const headerList: Array<[string, string]> = fields.entries().map(([name, value]: [string, Uint8Array]) => [
    name,
    decodeUtf8(value instanceof Uint8Array ? value : Uint8Array.from(value)),
  ]);
  dispose(fields);

  let incoming: any;
  let stream: any;
  try {
    incoming = response.consume();
    stream = incoming.stream();
  } catch {
    throw fail("other", "response body unavailable");
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  let truncated = false;
  try {
    for (;;) {
      const remaining = maxBodyBytes - total;
      // At the cap, read one more byte to learn whether anything is left.
      const want = Math.min(Math.max(remaining, 1), 64 * 1024);
      let chunk: Uint8Array;
      try {
        chunk = stream.blockingRead(engine.int64(want));
      } catch (err) {
        if (witPayload(err)?.tag === "closed") break;
        throw fromStream(context, err);
      }
      if (remaining <= 0) {
        if (chunk.length > 0) {
          truncated = true;
          break;
        }
        continue;
      }
      const bytes = chunk instanceof Uint8Array ? chunk : Uint8Array.from(chunk);
      const keep = bytes.length > remaining ? bytes.subarray(0, remaining) : bytes;
      chunks.push(keep);
      total += keep.length;
      if (bytes.length > remaining) {
        truncated = true;
        break;
      }
    }
  } finally {
    dispose(stream);
    dispose(incoming);
  }
  const body = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    body.set(chunk, at);
    at += chunk.length;
  }
  return new HttpResponse(status, headerList, body, truncated);
}

/**
 * Outgoing HTTP over `wasi:http/outgoing-handler`, synchronous and the same
 * on StarlingMonkey and QuickJS: `http.fetch(url, options)`, `http.get(url)`,
 * `http.resolve(base, location)`.
 */
export const http = {
  fetch,
  get: (url: string, options: Omit<FetchOptions, "method"> = {}) => fetch(url, { ...options, method: "GET" }),
  resolve,
  DEFAULT_MAX_BODY_BYTES,
};
