"""`py_fetch_url`: GET a web page, following redirects (the Python twin of `fetch_url`).

Build: toolhost build plugins/python/py_fetch_url (componentize-py 0.25.1 on PATH).
"""

from dataclasses import dataclass
from typing import Annotated

from toolhost import Effect, Failed, Field, Json, Output, ResourceLink, http, prompt, tool

MAX_REDIRECTS = 5
"""Redirects followed before giving up."""


@dataclass
class Input:
    """What to fetch."""

    url: Annotated[str, "The absolute http(s) URL to fetch."]
    max_bytes: Annotated[int, Field("Keep at most this many bytes of the body (default 1 MiB).", ge=1, le=16_777_216)] = 1024 * 1024


@tool(
    description=prompt("""
        Fetch a URL with GET and return its status, final URL (after up to 5
        redirects), content type and body as text, cut at `max_bytes`, and a
        link to the page. Use it to read a page or an API response from a host
        the operator allowed; other hosts are refused. It cannot send a body or
        other methods.
    """),
    effect=Effect.READ,
)
def fetch_url(input: Input) -> Output:
    url = input.url
    for _ in range(MAX_REDIRECTS + 1):
        response = http.fetch(url, max_body_bytes=input.max_bytes)
        if response.is_redirect:
            url = http.resolve(url, response.header("location"))
            continue
        content_type = response.header("content-type")
        fetched = {
            "status": response.status,
            "url": url,
            "contentType": content_type,
            "body": response.text(),
            "truncated": response.truncated,
        }
        # The page itself, for a client that would rather read it whole.
        page = ResourceLink(url, "page", "The fetched page, at its final URL.", content_type)
        return Output([Json(fetched), page], fetched)
    raise Failed(f"more than {MAX_REDIRECTS} redirects; last Location: {url}")
