/** Content blocks, resources and questions as the contract's WIT values, for the engines' bindings. */
import { engine } from "toolhost/engine";
import { AskError, Failed, ResourceNotFound, messageOf } from "./errors.ts";
import { toJsonText, type ContentBlock } from "./output.ts";

/** An optional string as the engine's `option<string>`. */
export function optionText(value: string | undefined): string | null | undefined {
  return value === undefined ? engine.none : value;
}

/** A content block as the contract's `content-block`. */
export function blockToWit(block: ContentBlock): any {
  switch (block.type) {
    case "text":
      return { tag: "text", val: String(block.text) };
    case "json":
      return { tag: "json", val: toJsonText(block.value) };
    case "image":
      return { tag: "image", val: { mediaType: block.mediaType, data: block.data } };
    case "document":
      return {
        tag: "document",
        val: {
          body: { mediaType: block.mediaType, data: block.data },
          name: optionText(block.name),
          uri: optionText(block.uri),
        },
      };
    case "searchResult":
      return { tag: "search-result", val: { source: block.source, title: block.title, text: block.text } };
    case "audio":
      return { tag: "audio", val: { mediaType: block.mediaType, data: block.data } };
    case "resourceLink":
      return {
        tag: "resource-link",
        val: {
          uri: block.uri,
          name: block.name,
          description: optionText(block.description),
          mediaType: optionText(block.mediaType),
        },
      };
    default:
      throw new Failed(`unknown content block type ${JSON.stringify((block as any).type)}`);
  }
}

/** One resource's contents as the contract's `resource-contents`: text or bytes. */
export function resourceContentsToWit(uri: string, mimeType: string | undefined, data: string | Uint8Array): any {
  return {
    uri,
    mediaType: optionText(mimeType),
    data: typeof data === "string" ? { tag: "text", val: data } : { tag: "blob", val: data },
  };
}

/** What a resource read threw as the contract's `read-error`. */
export function readErrorToWit(err: unknown): { tag: "not-found" } | { tag: "failed"; val: string } {
  if (err instanceof ResourceNotFound) return { tag: "not-found" };
  return { tag: "failed", val: messageOf(err) };
}

/** What the user did with a question, from the contract's `elicit-answer`. */
export function elicitAnswerFromWit(raw: any): { action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> } {
  switch (raw?.tag) {
    case "accept": {
      let content: unknown;
      try {
        content = JSON.parse(String(raw.val));
      } catch (err) {
        throw new AskError(`the answer is not valid JSON: ${messageOf(err)}`);
      }
      if (content === null || typeof content !== "object" || Array.isArray(content)) {
        throw new AskError(`the answer is not a JSON object: ${String(raw.val).slice(0, 200)}`);
      }
      return { action: "accept", content: content as Record<string, unknown> };
    }
    case "decline":
    case "cancel":
      return { action: raw.tag };
    default:
      throw new AskError(`unknown answer ${JSON.stringify(raw?.tag)}`);
  }
}

/** A sampling message's content as the contract's `sampling-content`. */
export function samplingContentToWit(content: unknown): any {
  if (typeof content === "string") return { tag: "text", val: content };
  const block = content as ContentBlock | undefined;
  switch (block?.type) {
    case "text":
      return { tag: "text", val: String(block.text) };
    case "image":
    case "audio":
      if (typeof block.mediaType !== "string" || !(block.data instanceof Uint8Array)) {
        throw new TypeError(`an ${block.type} message needs mediaType (a string) and data (a Uint8Array)`);
      }
      return { tag: block.type, val: { mediaType: block.mediaType, data: block.data } };
    default:
      throw new TypeError(
        `a sampling message's content is a string or a text, image or audio block, not ${
          block && typeof block === "object" ? `a ${JSON.stringify(block.type)} block` : typeof content
        }`,
      );
  }
}

/** The contract's `sampling-content` as a text, image or audio block. */
export function samplingContentFromWit(
  raw: any,
): { type: "text"; text: string } | { type: "image" | "audio"; mediaType: string; data: Uint8Array } {
  switch (raw?.tag) {
    case "text":
      return { type: "text", text: String(raw.val) };
    case "image":
    case "audio": {
      const data = raw.val?.data;
      return {
        type: raw.tag,
        mediaType: String(raw.val?.mediaType),
        data: data instanceof Uint8Array ? data : Uint8Array.from(data ?? []),
      };
    }
    default:
      throw new AskError(`unknown sampling content ${JSON.stringify(raw?.tag)}`);
  }
}

/** An `option<T>` the engine lifted (`null` or `undefined` for none) as `T | undefined`. */
export function fromOption<T>(value: T | null | undefined): T | undefined {
  return value === null ? undefined : value;
}
