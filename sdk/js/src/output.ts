/** One block of a tool's result. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "json"; value: unknown }
  | { type: "image"; mediaType: string; data: Uint8Array }
  | { type: "document"; mediaType: string; data: Uint8Array; name?: string; uri?: string }
  | { type: "searchResult"; source: string; title: string; text: string }
  | { type: "audio"; mediaType: string; data: Uint8Array }
  | { type: "resourceLink"; uri: string; name: string; description?: string; mediaType?: string };

/** A text block. */
export const text = (text: string): ContentBlock => ({ type: "text", text });
/** A JSON block (any JSON value). */
export const json = (value: unknown): ContentBlock => ({ type: "json", value });
/** An image block, e.g. `image("image/png", bytes)`. */
export const image = (mediaType: string, data: Uint8Array): ContentBlock => ({ type: "image", mediaType, data });
/**
 * A document block, e.g. `document("application/pdf", bytes, "report.pdf")`;
 * `uri` is where it lives, when it has an address (MCP clients get it as the
 * embedded resource's URI).
 */
export const document = (mediaType: string, data: Uint8Array, name?: string, uri?: string): ContentBlock => ({
  type: "document",
  mediaType,
  data,
  ...(name === undefined ? {} : { name }),
  ...(uri === undefined ? {} : { uri }),
});
/** A search-hit block. */
export const searchResult = (source: string, title: string, text: string): ContentBlock => ({
  type: "searchResult",
  source,
  title,
  text,
});

/** An audio block, e.g. `audio("audio/wav", bytes)`. */
export const audio = (mediaType: string, data: Uint8Array): ContentBlock => ({ type: "audio", mediaType, data });
/** A link to a resource the client can fetch or read, instead of its bytes. */
export const resourceLink = (
  uri: string,
  name: string,
  options: { description?: string; mediaType?: string } = {},
): ContentBlock => ({ type: "resourceLink", uri, name, ...options });

const BLOCK_TYPES = new Set(["text", "json", "image", "document", "searchResult", "audio", "resourceLink"]);

/** Whether `value` is a content block made by the helpers above. */
export function isContentBlock(value: unknown): value is ContentBlock {
  return (
    !!value && typeof value === "object" && !Array.isArray(value) && BLOCK_TYPES.has((value as any).type)
  );
}

/**
 * A tool's result: blocks, an optional structured object (MCP
 * `structuredContent`) and an error flag.
 *
 * `execute` may return it, or something that converts to it: a string (one
 * text block), an array of blocks, or any other JSON value (a JSON block; a
 * plain object is also the structured result).
 */
export class Output {
  content: ContentBlock[];
  structured?: Record<string, unknown>;
  isError: boolean;

  constructor(init: { content?: ContentBlock[]; structured?: Record<string, unknown>; isError?: boolean } = {}) {
    this.content = init.content ?? [];
    if (init.structured !== undefined) this.structured = init.structured;
    this.isError = init.isError ?? false;
  }

  /** One text block. */
  static text(value: string): Output {
    return new Output().withText(value);
  }
  /** A JSON value: an object is the structured result and a JSON block; anything else a JSON block. */
  static json(value: unknown): Output {
    return isPlainObject(value)
      ? new Output({ content: [json(value)], structured: value })
      : new Output({ content: [json(value)] });
  }
  /** One text block that reports failure (`isError`); the model sees it. */
  static error(value: string): Output {
    return Output.text(value).withIsError(true);
  }
  /** Any value `execute` may return. */
  static from(value: unknown): Output {
    if (value instanceof Output) return value;
    if (value === undefined) return new Output();
    if (typeof value === "string") return Output.text(value);
    if (Array.isArray(value) && value.length > 0 && value.every(isContentBlock)) {
      return new Output({ content: value });
    }
    if (isContentBlock(value)) return new Output({ content: [value] });
    return Output.json(value);
  }

  withText(value: string): this {
    this.content.push(text(value));
    return this;
  }
  withJson(value: unknown): this {
    this.content.push(json(value));
    return this;
  }
  withImage(mediaType: string, data: Uint8Array): this {
    this.content.push(image(mediaType, data));
    return this;
  }
  withDocument(mediaType: string, data: Uint8Array, name?: string, uri?: string): this {
    this.content.push(document(mediaType, data, name, uri));
    return this;
  }
  withSearchResult(source: string, title: string, text: string): this {
    this.content.push(searchResult(source, title, text));
    return this;
  }
  withAudio(mediaType: string, data: Uint8Array): this {
    this.content.push(audio(mediaType, data));
    return this;
  }
  withResourceLink(uri: string, name: string, options: { description?: string; mediaType?: string } = {}): this {
    this.content.push(resourceLink(uri, name, options));
    return this;
  }
  withStructured(structured: Record<string, unknown>): this {
    this.structured = structured;
    return this;
  }
  withIsError(isError = true): this {
    this.isError = isError;
    return this;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (!value || typeof value !== "object") return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** JSON text of a value; `bigint`s become numbers (exact when safe). */
export function toJsonText(value: unknown): string {
  const out = JSON.stringify(value, (_key, v) => (typeof v === "bigint" ? Number(v) : v));
  return out === undefined ? "null" : out;
}
