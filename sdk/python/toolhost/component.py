"""The component's entry module: exports ``toolhost:tool/tool`` for the ``@tool`` function,
``toolhost:tool/prompts`` for the ``@prompts.template`` functions and
``toolhost:tool/resources`` for the ``@resources.resource`` and
``@resources.template`` functions (none unless ``tool.py`` defines some).

componentize-py is pointed at this module; it imports the author's module
``tool`` (``tool.py`` on the ``-p`` path), which defines one ``@tool``
function. Everything runs at build time too (componentize-py snapshots the
interpreter after imports), so ``tool.py`` must not touch grants at import.

`toolhost build` points componentize-py here (see ``toolhost/author/python.rs``).
"""

from __future__ import annotations

import json
from typing import Any, Optional

import tool as _user_module  # noqa: F401  (registers the @tool function)
from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import prompts as wit_prompts
from wit_world.exports import resources as wit_resources
from wit_world.imports import toolhost_tool_types as wit

# Modules are found at build time only: componentize-py snapshots the
# interpreter after this module is imported, and the component carries no
# Python files. Load every binding the helpers use now (they import lazily so
# that they also import outside a component).
from wit_world.imports import (  # noqa: F401
    artifacts, ask, atomics, context, error, log, metrics, outgoing_handler, poll, progress,
    reminders, resource_updates, sessions, store, streams, wasi_http_types,
)

from .context import CallContext
from .decorator import Effect, registered
from .errors import ToolError
from .output import Audio, Document, Image, Json, Output, ResourceLink, SearchResult, Text, _dumps
from .prompts import registered as _registered_prompts
from .resources import Contents, NotFound
from .resources import error_message as _read_error_message
from .resources import read as _read_resource
from .resources import registered_resources as _registered_resources
from .resources import registered_templates as _registered_templates

_SPEC = registered()

_EFFECTS = {Effect.READ: wit.Effect.READ, Effect.IDEMPOTENT: wit.Effect.IDEMPOTENT,
            Effect.WRITE: wit.Effect.WRITE}


def _block(block: Any) -> Any:
    if isinstance(block, Text):
        return wit.ContentBlock_Text(block.text)
    if isinstance(block, Json):
        return wit.ContentBlock_Json(_dumps(block.value))
    if isinstance(block, Image):
        return wit.ContentBlock_Image(wit.Blob(block.media_type, bytes(block.data)))
    if isinstance(block, Document):
        return wit.ContentBlock_Document(
            wit.Document(wit.Blob(block.media_type, bytes(block.data)), block.name, block.uri))
    if isinstance(block, SearchResult):
        return wit.ContentBlock_SearchResult(wit.SearchResult(block.source, block.title, block.text))
    if isinstance(block, Audio):
        return wit.ContentBlock_Audio(wit.Blob(block.media_type, bytes(block.data)))
    if isinstance(block, ResourceLink):
        return wit.ContentBlock_ResourceLink(
            wit.ResourceLink(block.uri, block.name, block.description, block.media_type))
    raise TypeError(f"not a content block: {type(block).__name__}")


def _output(out: Output) -> Any:
    return wit.ToolOutput(
        [_block(b) for b in out.content],
        None if out.structured is None else _dumps(out.structured),
        bool(out.is_error),
    )


def _error(err: ToolError) -> Any:
    if err.kind == "invalid-input":
        return wit.ToolError_InvalidInput(err.message)
    if err.kind == "transient":
        return wit.ToolError_Transient(err.message)
    return wit.ToolError_Failed(err.message)


class Tool(exports.Tool):
    """The ``toolhost:tool/tool`` export, backed by the registered ``@tool`` function."""

    def metadata(self) -> Any:
        effect = _SPEC.effect
        return wit.ToolMetadata(
            description=_SPEC.description,
            input_schema=None if _SPEC.input_schema is None else json.dumps(_SPEC.input_schema),
            output_schema=None if _SPEC.output_schema is None else json.dumps(_SPEC.output_schema),
            effect=(wit.EffectDeclaration_Fixed(_EFFECTS[effect]) if isinstance(effect, Effect)
                    else wit.EffectDeclaration_ByInput()),
            time_args=list(_SPEC.time_args),
            has_dry_run_result=_SPEC.has_dry_run,
        )

    def effect_for(self, input: str) -> Any:
        return _EFFECTS[_SPEC.effect_for(input)]

    def dry_run_result(self, input: str) -> Optional[Any]:
        try:
            out = _SPEC.dry_run_result(input)
        except Exception:
            return None
        return None if out is None else _output(out)

    def execute(self, input: str, ctx: Any) -> Any:
        try:
            call = CallContext._from_wit(ctx, context.workspace_dir(), context.state_root())
            out = _SPEC.run(input, call)
            return _output(out)
        except ToolError as err:
            raise Err(_error(err)) from None
        except Exception as err:  # e.g. a result that is not JSON-serializable
            raise Err(wit.ToolError_Failed(f"{type(err).__name__}: {err}")) from None


def _prompt_block(content: Any) -> Any:
    return _block(Text(content) if isinstance(content, str) else content)


class Prompts(exports.Prompts):
    """The ``toolhost:tool/prompts`` export, backed by the ``@prompts.template`` functions."""

    def list_prompts(self) -> list:
        return [
            wit_prompts.Prompt(
                spec.name,
                spec.title,
                spec.description,
                [wit_prompts.PromptArgument(n, d, r) for (n, d, r) in spec.arguments],
            )
            for spec in _registered_prompts()
        ]

    def get_prompt(self, name: str, arguments: list) -> Any:
        spec = next((p for p in _registered_prompts() if p.name == name), None)
        if spec is None:
            raise Err(f"this component offers no prompt {name!r}")
        try:
            messages = spec.messages(dict(arguments))
            return wit_prompts.PromptResult(None, [
                wit_prompts.PromptMessage(
                    wit_prompts.Role.ASSISTANT if m.role == "assistant" else wit_prompts.Role.USER,
                    _prompt_block(m.content),
                )
                for m in messages
            ])
        except Exception as err:
            raise Err(f"{type(err).__name__}: {err}") from None

    def complete_argument(self, name: str, argument: str, value: str) -> list:
        spec = next((p for p in _registered_prompts() if p.name == name), None)
        if spec is None or spec.complete is None:
            return []
        try:
            return [str(v) for v in spec.complete(argument, value)]
        except Exception:
            return []


def _resource_contents(contents: Contents) -> Any:
    data = contents.data
    return wit_resources.ResourceContents(
        contents.uri,
        contents.media_type,
        wit_resources.ResourceData_Text(data) if isinstance(data, str)
        else wit_resources.ResourceData_Blob(bytes(data)),
    )


class Resources(exports.Resources):
    """The ``toolhost:tool/resources`` export, backed by the ``@resources`` functions."""

    def list_resources(self) -> list:
        return [
            wit_resources.ResourceInfo(spec.uri, spec.name, spec.title, spec.description, spec.media_type)
            for spec in _registered_resources()
        ]

    def list_resource_templates(self) -> list:
        return [
            wit_resources.ResourceTemplate(
                spec.uri_template, spec.name, spec.title, spec.description, spec.media_type)
            for spec in _registered_templates()
        ]

    def read_resource(self, uri: str, parameters: list) -> list:
        try:
            return [_resource_contents(c) for c in _read_resource(uri, parameters)]
        except NotFound:
            raise Err(wit_resources.ReadError_NotFound()) from None
        except Exception as err:
            raise Err(wit_resources.ReadError_Failed(_read_error_message(err))) from None
