/**
 * `ts_fetch_url`: GET a web page, following redirects.
 *
 * The TypeScript twin of `fetch_url` (Rust); one test suite runs both.
 * Needs the page's origin in its `http` grant.
 */
import { Failed, Output, defineTool, http, json, prompt, resourceLink } from "toolhost";

/** Redirects followed before giving up. */
const MAX_REDIRECTS = 5;

interface Input {
  url: string;
  max_bytes: number;
}

export default defineTool<Input>({
  description: prompt`
    Fetch a URL with GET and return its status, final URL (after up to 5
    redirects), content type and body as text, cut at \`max_bytes\`, and a
    link to the page. Use it to read a page or an API response from a host
    the operator allowed; other hosts are refused. It cannot send a body or
    other methods.
  `,
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    description: "What to fetch.",
    type: "object",
    properties: {
      url: {
        type: "string",
        description: "The absolute http(s) URL to fetch.",
      },
      max_bytes: {
        type: "integer",
        format: "uint",
        minimum: 1,
        maximum: 16777216,
        default: 1048576,
        description: "Keep at most this many bytes of the body (default 1 MiB).",
      },
    },
    required: ["url"],
  },
  effect: "read",
  execute(input) {
    let url = input.url;
    for (let i = 0; i <= MAX_REDIRECTS; i++) {
      const response = http.fetch(url, { maxBodyBytes: input.max_bytes });
      const location = response.header("location");
      if (response.isRedirect && location !== undefined) {
        url = http.resolve(url, location);
        continue;
      }
      const contentType = response.header("content-type");
      const fetched = {
        status: response.status,
        url,
        contentType: contentType ?? null,
        body: response.text(),
        truncated: response.truncated,
      };
      // The page itself, for a client that would rather read it whole.
      const page = resourceLink(url, "page", {
        description: "The fetched page, at its final URL.",
        ...(contentType === undefined ? {} : { mediaType: contentType }),
      });
      return new Output({ content: [json(fetched), page], structured: fetched });
    }
    throw new Failed(`more than ${MAX_REDIRECTS} redirects; last Location: ${url}`);
  },
});
