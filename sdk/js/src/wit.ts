/** Content blocks and resources as the contract's WIT values, for the engines' bindings. */
import { engine } from "toolhost/engine";
import { Failed, ResourceNotFound, messageOf } from "./errors.ts";
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
