/** Content blocks as the contract's WIT values, for the engines' bindings. */
import { engine } from "toolhost/engine";
import { Failed } from "./errors.ts";
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
