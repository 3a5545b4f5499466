"""`py_word_count`: count the lines, words and bytes of a file in the workspace (the Python twin of `word_count`).

Build: toolhost build plugins/python/py_word_count (componentize-py 0.25.1 on PATH).
"""

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated

from toolhost import Effect, Failed, Field, InvalidInput, progress, prompt, prompts, tool

WORKSPACE = "/workspace"


@dataclass
class Input:
    """Which file to count."""

    path: Annotated[str, Field("The file's path, relative to the workspace (e.g. `notes/todo.md`).", min_length=1)]


@tool(
    description=prompt("""
        Count the lines, words and bytes of a file in the session's workspace,
        like `wc`. Lines are newline characters; words are runs of characters
        between whitespace. The path is relative to the workspace.
    """),
    effect=Effect.READ,
)
def word_count(input: Input) -> dict:
    relative = PurePosixPath(input.path)
    if relative.is_absolute() or ".." in relative.parts:
        raise InvalidInput(f"path {_quote(input.path)} must be relative to the workspace, without `..`")
    try:
        with open(PurePosixPath(WORKSPACE, relative), "rb") as file:
            data = file.read()
    except FileNotFoundError:
        raise InvalidInput(f"no file named {input.path} in the workspace") from None
    except OSError as err:
        raise Failed(f"{err.strerror or err} (os error {err.errno})") from None
    progress.report(1, 2, "read the file")
    counted = {
        "path": input.path,
        "lines": data.count(b"\n"),
        "words": len(data.decode("utf-8", "replace").split()),
        "bytes": len(data),
    }
    progress.report(2, 2, "counted")
    return counted


@prompts.template(
    name="py_word_count_report",
    description="Ask for a file's word count, reported briefly or in detail.",
    arguments={"path": "The file, relative to the workspace.",
               "style": "`brief` (the default) or `detailed`."},
    complete=lambda argument, value: (
        [s for s in ("brief", "detailed") if s.startswith(value)] if argument == "style" else []),
)
def report(path: str, style: str = "brief") -> str:
    return f"Use py_word_count on `{path}` and give a {style} report of its lines, words and bytes."


def _quote(text: str) -> str:
    """Double-quoted like Rust's `{:?}`."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
