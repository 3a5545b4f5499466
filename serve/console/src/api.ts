// The server's public HTTP API, as the console uses it: the token (kept in
// memory only) goes in `Authorization`, every body is JSON, and every
// state-changing request says it comes from the console.

/** An answer of the API: its status and JSON body. */
export interface Answer {
  status: number;
  body: any;
}

/** The server needs a token the console does not have (or has wrong). */
export class LoginNeeded extends Error {}

/** The API of one server, under `/<slug>/v1`. */
export class Api {
  private token: string | null = null;

  constructor(readonly slug: string) {}

  /** Use `token` from now on (kept in this page's memory only). */
  login(token: string): void {
    this.token = token;
  }

  /** Forget the token; whether there was one. */
  logout(): boolean {
    const had = this.token !== null;
    this.token = null;
    return had;
  }

  /** `method` on `path` (under `/<slug>/v1`) with `body` as JSON, and `extra` headers. */
  async request(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(this.url(path), {
      method,
      headers: { ...this.headers(body !== undefined), ...extra },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "omit",
    });
    if (response.status === 401) throw new LoginNeeded("the server needs its token");
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: kept as text.
    }
    return { status: response.status, body: parsed };
  }

  /** A GET (with `extra` headers) whose body is the answer; any other status is an error. */
  async get(path: string, extra: Record<string, string> = {}): Promise<any> {
    const answer = await this.request("GET", path, undefined, extra);
    if (answer.status !== 200) throw new Error(describeError(answer));
    return answer.body;
  }

  /** The raw response of a GET (a stream, a download). */
  async raw(path: string, extra: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
    const response = await fetch(this.url(path), {
      headers: { ...this.headers(false), ...extra },
      credentials: "omit",
      signal,
    });
    if (response.status === 401) throw new LoginNeeded("the server needs its token");
    return response;
  }

  private url(path: string): string {
    return `/${encodeURIComponent(this.slug)}/v1${path}`;
  }

  private headers(json: boolean): Record<string, string> {
    const headers: Record<string, string> = { "x-toolhost-console": "1" };
    if (json) headers["content-type"] = "application/json";
    if (this.token !== null) headers["authorization"] = `Bearer ${this.token}`;
    return headers;
  }
}

/** One line for an error answer: its code and message. */
export function describeError(answer: Answer): string {
  const error = answer.body && typeof answer.body === "object" ? answer.body.error : null;
  if (error && typeof error === "object") return `${error.code}: ${error.message}`;
  return `HTTP ${answer.status}: ${String(answer.body).slice(0, 500)}`;
}
