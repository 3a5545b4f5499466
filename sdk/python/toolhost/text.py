"""Text helpers for descriptions and prompts written as indented literals."""

from __future__ import annotations

__all__ = ["dedent", "prompt"]

_SPACE = " \t"


def dedent(text: str) -> str:
    """Remove the indentation a multi-line literal picks up from the code around it.

    Same rules as the Rust SDK's ``dedent`` (and ``inspect.cleandoc``):
    leading whitespace is stripped from the first line; the smallest
    indentation (spaces and tabs) of the later non-blank lines is removed from
    each of them; leading and trailing blank lines are dropped, as is trailing
    whitespace on every line. Line endings become ``\\n``.
    """
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    indents = [len(line) - len(line.lstrip(_SPACE)) for line in lines[1:] if line]
    indent = min(indents, default=0)
    out = [lines[0].lstrip()] + [line[indent:] for line in lines[1:]]
    while out and not out[0]:
        out.pop(0)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def prompt(text: str, *, unwrap: bool = False) -> str:
    """A description or prompt from an indented triple-quoted literal.

    Dedents like :func:`dedent`. With ``unwrap=True`` the lines of each
    paragraph are also joined with single spaces (paragraphs stay separated
    by a blank line; indented lines and list items keep their line breaks),
    for text that was wrapped only to fit the source code.
    """
    text = dedent(text)
    if not unwrap:
        return text
    paragraphs = []
    for paragraph in text.split("\n\n"):
        joined: list[str] = []
        for line in paragraph.split("\n"):
            starts_item = line[:1] in ("-", "*", " ", "\t") or line[:2].rstrip(".").isdigit()
            if joined and line and not starts_item:
                joined[-1] = joined[-1] + " " + line
            else:
                joined.append(line)
        paragraphs.append("\n".join(joined))
    return "\n\n".join(paragraphs)
