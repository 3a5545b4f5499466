/**
 * Resources a tool's component offers to MCP clients (`resources/list`,
 * `resources/templates/list`, `resources/read`): list them in the tool's
 * `resources` (fixed addresses) and `resourceTemplates` (addresses that
 * follow an RFC 6570 template of simple `{name}` expressions).
 *
 * ```ts
 * defineTool({
 *   ...,
 *   resourceTemplates: [{
 *     uriTemplate: "notes://{id}",
 *     name: "note",
 *     mimeType: "text/markdown",
 *     read({ id = "" }) {
 *       const text = kv.open("notes").getText(id);
 *       if (text === undefined) throw new ResourceNotFound();
 *       return text;
 *     },
 *   }],
 * });
 * ```
 *
 * `read` returns text or bytes (at the address read, with the declared
 * media type) or a list of `ResourceContents`; it throws `ResourceNotFound`
 * when nothing is there. The host lists the resources and templates when
 * the component loads and runs `read` with the tool's grants, read-only, and
 * no workspace; a template's values come percent-decoded. A call tells
 * subscribed clients that a resource of its own component changed with
 * `resourceUpdated(uri)`.
 */
import { engine } from "toolhost/engine";
import { Failed, ResourceNotFound, messageOf, witPayload } from "./errors.ts";
import { optionText, readErrorToWit, resourceContentsToWit } from "./wit.ts";

/** The contents of one resource: exactly one of `text` and `blob`. */
export interface ResourceContents {
  /** Its address: the one read, or one below it. */
  uri: string;
  /** Its IANA media type, when known. */
  mimeType?: string;
  /** Text. */
  text?: string;
  /** Bytes (MCP clients get them base64-encoded). */
  blob?: Uint8Array;
}

/** What `read` may return: text or bytes at the address read, or contents. */
export type ResourceReadResult = string | Uint8Array | ResourceContents[];

/** A resource at a fixed address. */
export interface ResourceDefinition {
  /** Its address, unique on the host: an absolute URI, at most 2048 bytes. */
  uri: string;
  /** A short name. */
  name: string;
  /** A title for people. */
  title?: string;
  /** What it holds, for the model. */
  description?: string;
  /** Its IANA media type, when known; text or bytes `read` returns get it. */
  mimeType?: string;
  /** Its contents; throw `ResourceNotFound` when there are none (now). */
  read(): ResourceReadResult;
}

/** A family of resources whose addresses follow a template. */
export interface ResourceTemplateDefinition {
  /**
   * An RFC 6570 template of simple expressions, e.g. `notes://{folder}/{id}`:
   * unique on the host, at most 2048 bytes; each `{name}` is 1-64 characters
   * of A-Z, a-z, 0-9 and `_` and matches one or more characters other than
   * `/`, `?` and `#`.
   */
  uriTemplate: string;
  /** A short name. */
  name: string;
  /** A title for people. */
  title?: string;
  /** What its resources hold, for the model. */
  description?: string;
  /** The media type of its resources, when known; text or bytes `read` returns get it. */
  mimeType?: string;
  /** The contents at the address whose expressions have the values `params` (percent-decoded). */
  read(params: Record<string, string>): ResourceReadResult;
}

/**
 * Tell the MCP clients subscribed to the resource at `uri` that it changed.
 * Allowed for the addresses the tool's own component offers (a listed
 * resource, or one following its templates), at most 64 distinct
 * addresses per call; the host's refusal throws an `Error` with its reason.
 */
export function resourceUpdated(uri: string): void {
  try {
    engine.resourceUpdates.updated(String(uri));
  } catch (err) {
    const payload = witPayload(err);
    throw new Error(typeof payload === "string" ? payload : messageOf(err));
  }
}

const EXPRESSION = /\{([^{}]*)\}/g;
const PARAMETER_NAME = /^[A-Za-z0-9_]{1,64}$/;

/** A template's parameter names, in order, and a pattern its addresses match. */
export function parseUriTemplate(uriTemplate: string): { names: string[]; pattern: RegExp } {
  const names: string[] = [];
  let source = "^";
  let at = 0;
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  for (const match of uriTemplate.matchAll(EXPRESSION)) {
    const name = match[1] ?? "";
    const where = `resource template ${JSON.stringify(uriTemplate)}`;
    if (!PARAMETER_NAME.test(name)) {
      throw new TypeError(`${where}: {${name}} is not a simple expression (1-64 characters of A-Z, a-z, 0-9 and _)`);
    }
    if (names.includes(name)) throw new TypeError(`${where} names {${name}} twice`);
    const literal = uriTemplate.slice(at, match.index);
    if (names.length > 0 && literal === "") throw new TypeError(`${where}: two expressions side by side`);
    source += escape(literal) + "([^/?#]+)";
    names.push(name);
    at = (match.index ?? 0) + match[0].length;
  }
  const rest = uriTemplate.slice(at);
  if (/[{}]/.test(rest)) throw new TypeError(`resource template ${JSON.stringify(uriTemplate)} has an unmatched brace`);
  return { names, pattern: new RegExp(source + escape(rest) + "$", "s") };
}

function isContents(value: unknown): value is ResourceContents {
  return !!value && typeof value === "object" && typeof (value as any).uri === "string";
}

/** What `read` returned as the contract's `resource-contents` list. */
function contentsToWit(result: unknown, uri: string, mimeType: string | undefined): any[] {
  if (typeof result === "string" || result instanceof Uint8Array) {
    return [resourceContentsToWit(uri, mimeType, result)];
  }
  const items = Array.isArray(result) ? result : isContents(result) ? [result] : undefined;
  if (!items) {
    throw new Failed(`a resource's read returns a string, a Uint8Array or ResourceContents[], not ${describe(result)}`);
  }
  return items.map((item) => {
    if (!isContents(item)) throw new Failed(`a resource's read returned ${describe(item)} among its contents`);
    const hasText = typeof item.text === "string";
    const hasBlob = item.blob instanceof Uint8Array;
    if (hasText === hasBlob) {
      throw new Failed(`the contents of ${JSON.stringify(item.uri)} need exactly one of text (a string) and blob (a Uint8Array)`);
    }
    return resourceContentsToWit(item.uri, item.mimeType, hasText ? item.text! : item.blob!);
  });
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? (value as object).constructor?.name ?? "an object" : typeof value;
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return !!value && (typeof value === "object" || typeof value === "function") && typeof (value as any).then === "function";
}

/**
 * The `toolhost:tool/resources` export for a tool's resources and
 * templates. The build's entry module does `export const resources =
 * exportResources(definition.resources, definition.resourceTemplates)`. A
 * malformed template fails here, at build time.
 */
export function exportResources(
  resources: ResourceDefinition[] = [],
  templates: ResourceTemplateDefinition[] = [],
): Record<string, (...args: any[]) => any> {
  for (const r of resources) {
    if (typeof r?.read !== "function") throw new TypeError(`resource ${JSON.stringify(r?.uri)}: \`read\` must be a function`);
  }
  const parsed = templates.map((t) => {
    if (typeof t?.read !== "function") {
      throw new TypeError(`resource template ${JSON.stringify(t?.uriTemplate)}: \`read\` must be a function`);
    }
    return { template: t, ...parseUriTemplate(t.uriTemplate) };
  });

  /** The contents at `uri`, as the host asks for them; throws the read's error. */
  function read(uri: string, params: Array<[string, string]>): unknown {
    if (params.length === 0) {
      const fixed = resources.find((r) => r.uri === uri);
      if (fixed) return settle(() => fixed.read(), uri, fixed.mimeType);
    }
    // The host matched the template: the names pick it, the address decides
    // between templates with the same names.
    const names = params.map(([name]) => name).join("\u0000");
    const candidates = parsed.filter((p) => p.names.join("\u0000") === names);
    const chosen = candidates.find((p) => p.pattern.test(uri)) ?? candidates[0];
    if (!chosen) throw readErrorToWit(new ResourceNotFound());
    return settle(() => chosen.template.read(Object.fromEntries(params)), uri, chosen.template.mimeType);
  }

  function settle(run: () => unknown, uri: string, mimeType: string | undefined): unknown {
    let result: unknown;
    try {
      result = run();
      if (!isThenable(result)) return contentsToWit(result, uri, mimeType);
    } catch (err) {
      throw readErrorToWit(err);
    }
    if (engine.name === "starlingmonkey") {
      // StarlingMonkey runs its event loop until an export's promise settles.
      return Promise.resolve(result)
        .then((value) => contentsToWit(value, uri, mimeType))
        .catch((err) => {
          throw readErrorToWit(err);
        });
    }
    throw readErrorToWit(
      new Failed("read returned a Promise, which the QuickJS engine cannot wait for: make read synchronous " +
        "or build with --engine starlingmonkey"),
    );
  }

  return {
    listResources() {
      return resources.map((r) => ({
        uri: r.uri,
        name: r.name,
        title: optionText(r.title),
        description: optionText(r.description),
        mediaType: optionText(r.mimeType),
      }));
    },

    listResourceTemplates() {
      return templates.map((t) => ({
        uriTemplate: t.uriTemplate,
        name: t.name,
        title: optionText(t.title),
        description: optionText(t.description),
        mediaType: optionText(t.mimeType),
      }));
    },

    readResource(uri: string, params: Array<[string, string]>) {
      return read(uri, params);
    },
  };
}
