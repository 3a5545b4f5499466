"""Native unit tests of the pure-Python parts: ``python -m unittest discover sdk/python/tests``."""

import json
import sys
import unittest
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal, Optional, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolhost import (  # noqa: E402
    CallContext, Effect, Failed, Field, InvalidInput, Json, Output, Text, dedent, prompt, schema_of, tool,
)
from toolhost.decorator import ToolSpec  # noqa: E402
from toolhost.http import resolve  # noqa: E402
from toolhost.output import to_output  # noqa: E402
from toolhost.schema import convert  # noqa: E402


@dataclass
class Inner:
    depth: Annotated[int, "How deep."] = 2


class Filter(TypedDict, total=False):
    label: Annotated[str, "A label."]


@dataclass
class Pet:
    """A pet."""

    name: Annotated[str, Field("The pet's name.", min_length=1)]
    kind: Annotated[Literal["cat", "dog"], "Which animal."] = "cat"
    tags: list[str] = field(default_factory=list, metadata={"description": "Tags."})
    weight: Annotated[float, Field("Kilograms.", ge=0)] = 1.0
    note: Annotated[Optional[str], "A note."] = None
    inner: Optional[Inner] = None
    filter: Optional[Filter] = None


class TextTests(unittest.TestCase):
    def test_dedent_matches_the_rust_sdk(self):
        text = "\n            First line.\n              Indented more.\n            Last line.\n        "
        self.assertEqual(dedent(text), "First line.\n  Indented more.\nLast line.")
        self.assertEqual(dedent("Starts here.\n    Continues.\n        Nested."),
                         "Starts here.\nContinues.\n    Nested.")
        self.assertEqual(dedent("\n\n    a\n\n    b\n   \n\n"), "a\n\nb")
        self.assertEqual(dedent("\r\n\tone  \r\n\t\ttwo\r\n"), "one\n\ttwo")
        self.assertEqual(dedent("  plain text  "), "plain text")
        self.assertEqual(dedent(" \n \t \n"), "")

    def test_prompt_unwrap(self):
        text = """
            One sentence
            wrapped here.

            - item one
            - item two
        """
        self.assertEqual(prompt(text), "One sentence\nwrapped here.\n\n- item one\n- item two")
        self.assertEqual(prompt(text, unwrap=True), "One sentence wrapped here.\n\n- item one\n- item two")


class SchemaTests(unittest.TestCase):
    def test_dataclass_schema(self):
        s = schema_of(Pet)
        self.assertEqual(s["type"], "object")
        self.assertEqual(s["description"], "A pet.")
        self.assertEqual(s["required"], ["name"])
        self.assertFalse(s["additionalProperties"])
        p = s["properties"]
        self.assertEqual(p["name"], {"description": "The pet's name.", "type": "string", "minLength": 1})
        self.assertEqual(p["kind"], {"description": "Which animal.", "type": "string",
                                     "enum": ["cat", "dog"], "default": "cat"})
        self.assertEqual(p["tags"], {"description": "Tags.", "type": "array",
                                     "items": {"type": "string"}, "default": []})
        self.assertEqual(p["weight"]["minimum"], 0)
        self.assertEqual(p["note"]["type"], ["string", "null"])
        self.assertEqual(p["inner"]["type"], ["object", "null"])
        self.assertEqual(p["inner"]["properties"]["depth"]["default"], 2)
        self.assertNotIn("required", p["filter"])
        json.dumps(s)

    def test_convert(self):
        pet = convert({"name": "Rex", "weight": 3, "inner": {"depth": 5}, "filter": {"label": "x"}}, Pet)
        self.assertEqual(pet.name, "Rex")
        self.assertIsInstance(pet.weight, float)
        self.assertEqual(pet.inner, Inner(5))
        self.assertEqual(pet.filter, {"label": "x"})
        self.assertEqual(pet.kind, "cat")


class ToolTests(unittest.TestCase):
    def setUp(self):
        @tool(description="  Greet a pet.\n\n    Says hello.  ", effect=lambda p: Effect.READ,
              dry_run=lambda p: {"greeted": p.name, "dryRun": True}, time_args=["name"])
        def greet(pet: Pet, ctx: CallContext):
            if pet.name == "bad":
                raise InvalidInput("bad name")
            if pet.name == "boom":
                raise KeyError("k")
            return f"hello {pet.name} (attempt {ctx.attempt})"

        self.spec: ToolSpec = greet.__toolhost__

    def test_metadata(self):
        self.assertEqual(self.spec.description, "Greet a pet.\n\nSays hello.")
        self.assertEqual(self.spec.effect_for('{"name":"a"}'), Effect.READ)
        self.assertEqual(self.spec.time_args, ["name"])
        out = self.spec.dry_run_result('{"name":"a"}')
        self.assertEqual(out.structured, {"greeted": "a", "dryRun": True})

    def test_run(self):
        self.assertEqual(self.spec.run('{"name":"a"}', CallContext()).content, [Text("hello a (attempt 1)")])
        with self.assertRaises(InvalidInput):
            self.spec.run('{"name":"bad"}', CallContext())
        with self.assertRaises(Failed) as caught:
            self.spec.run('{"name":"boom"}', CallContext())
        self.assertEqual(caught.exception.message, "KeyError: 'k'")

    def test_outputs(self):
        self.assertEqual(to_output({"a": 1}), Output([Json({"a": 1})], {"a": 1}))
        self.assertEqual(to_output([1, 2]), Output([Json([1, 2])]))
        self.assertEqual(to_output([Text("a")]), Output([Text("a")]))
        self.assertEqual(to_output(None), Output())


class PromptTests(unittest.TestCase):
    def test_template_declares_its_parameters_as_arguments(self):
        from toolhost import prompts

        @prompts.template(arguments={"number": "The pull request."})
        def review_pr(number: str, style: str = "terse") -> list:
            """Review a pull request."""
            return [prompts.user(f"Review #{number}, {style}."), prompts.assistant("On it.")]

        spec = next(p for p in prompts.registered() if p.name == "review_pr")
        self.assertEqual(spec.description, "Review a pull request.")
        self.assertEqual(spec.arguments, [("number", "The pull request.", True), ("style", None, False)])
        messages = spec.messages({"number": "7"})
        self.assertEqual([m.role for m in messages], ["user", "assistant"])
        self.assertEqual(messages[0].content, "Review #7, terse.")
        with self.assertRaises(ValueError):
            prompts.template(name="review_pr")(lambda: "again")
        with self.assertRaises(ValueError):
            prompts.Message("system", "no such role")

        @prompts.template()
        def open_ended(topic: str, **extra) -> str:
            """Talk about a topic."""
            return topic

        spec = next(p for p in prompts.registered() if p.name == "open_ended")
        self.assertEqual(spec.arguments, [("topic", None, True)])


class ResolveTests(unittest.TestCase):
    def test_like_the_rust_sdk(self):
        base = "https://example.com/docs/guide/intro?x=1"
        self.assertEqual(resolve(base, "../api"), "https://example.com/docs/api")
        self.assertEqual(resolve(base, "/login"), "https://example.com/login")
        self.assertEqual(resolve(base, "//cdn.example.com/a"), "https://cdn.example.com/a")
        self.assertEqual(resolve(base, "http://other.test/"), "http://other.test/")
        self.assertEqual(resolve(base, "?y=2"), "https://example.com/docs/guide/intro?y=2")
        self.assertEqual(resolve("http://h:1/sub", "/sub/"), "http://h:1/sub/")


if __name__ == "__main__":
    unittest.main()
