"""Native unit tests of the pure-Python parts: ``python -m unittest discover sdk/python/tests``."""

import contextlib
import io
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


class ResourceTests(unittest.TestCase):
    def test_template_declares_its_parameters(self):
        from toolhost import resources

        @resources.template("test-notes://{folder}/{id}", media_type="text/markdown")
        def note(folder: str, id: str, style: str = "plain") -> str:
            """
            A note, by folder and id.
            """
            if id == "missing":
                raise resources.NotFound("no such note")
            if id == "boom":
                raise KeyError("k")
            if id == "bytes":
                return b"\x00\x01"
            if id == "many":
                return [resources.Contents(f"test-notes://{folder}/many/1", "one"),
                        resources.Contents(f"test-notes://{folder}/many/2", b"two", "application/octet-stream")]
            return f"{folder}/{id} ({style})"

        spec = next(t for t in resources.registered_templates() if t.uri_template == "test-notes://{folder}/{id}")
        self.assertEqual((spec.name, spec.description, spec.media_type, spec.title),
                         ("note", "A note, by folder and id.", "text/markdown", None))
        self.assertEqual(spec.parameters, ["folder", "id"])
        self.assertTrue(spec.matches("test-notes://a/b"))
        self.assertFalse(spec.matches("test-notes://a/b/c"))
        self.assertFalse(spec.matches("test-notes:///b"))

        params = [("folder", "work"), ("id", "a b")]
        self.assertEqual(resources.read("test-notes://work/a%20b", params),
                         [resources.Contents("test-notes://work/a%20b", "work/a b (plain)", "text/markdown")])
        self.assertEqual(resources.read("test-notes://w/bytes", [("folder", "w"), ("id", "bytes")]),
                         [resources.Contents("test-notes://w/bytes", b"\x00\x01", "text/markdown")])
        many = resources.read("test-notes://w/many", [("folder", "w"), ("id", "many")])
        self.assertEqual([(c.uri, c.data, c.media_type) for c in many], [
            ("test-notes://w/many/1", "one", None),
            ("test-notes://w/many/2", b"two", "application/octet-stream"),
        ])
        with self.assertRaises(resources.NotFound):
            resources.read("test-notes://w/missing", [("folder", "w"), ("id", "missing")])
        with self.assertRaises(resources.NotFound):  # no template has these parameters
            resources.read("test-notes://w", [("folder", "w")])
        with self.assertRaises(KeyError) as caught:
            resources.read("test-notes://w/boom", [("folder", "w"), ("id", "boom")])
        self.assertEqual(resources.error_message(caught.exception), "KeyError: 'k'")
        self.assertEqual(resources.error_message(Failed("plain")), "plain")

    def test_fixed_resources_and_returns(self):
        from toolhost import resources

        @resources.resource("test-fixed://readme", name="readme", title="Read me", media_type="text/plain")
        def readme() -> str:
            return "hello"

        @resources.resource("test-fixed://bad")
        def bad():
            """Returns what a read may not."""
            return 42

        specs = {r.uri: r for r in resources.registered_resources()}
        self.assertEqual((specs["test-fixed://readme"].name, specs["test-fixed://readme"].title), ("readme", "Read me"))
        self.assertEqual((specs["test-fixed://bad"].name, specs["test-fixed://bad"].description),
                         ("bad", "Returns what a read may not."))
        self.assertEqual(resources.read("test-fixed://readme"),
                         [resources.Contents("test-fixed://readme", "hello", "text/plain")])
        with self.assertRaises(TypeError):
            resources.read("test-fixed://bad")
        with self.assertRaises(resources.NotFound):
            resources.read("test-fixed://nothing-here")
        with self.assertRaises(TypeError):
            resources.Contents("test-fixed://x", 42)
        self.assertEqual(resources.Contents("test-fixed://x", bytearray(b"ab")).data, b"ab")
        with contextlib.redirect_stderr(io.StringIO()) as err:
            resources.updated("test-fixed://readme")  # outside a component: a line on stderr
        self.assertEqual(err.getvalue(), "[resource updated] test-fixed://readme\n")

    def test_template_checks(self):
        from toolhost import resources

        def read(**kwargs) -> str:
            return ""

        for bad in ("t://{a b}", "t://{+path}", "t://{a}{b}", "t://{a}/{a}", "t://{a", "t://a}", "t://{}"):
            with self.assertRaises(ValueError, msg=bad):
                resources.template(bad)(read)
        with self.assertRaises(ValueError):  # no parameter for {id}
            resources.template("test-checks://{id}")(lambda name: name)
        with self.assertRaises(ValueError):  # a parameter the template does not give
            resources.template("test-checks://{id}")(lambda id, extra: id)
        resources.template("test-checks://{id}")(read)
        with self.assertRaises(ValueError):
            resources.template("test-checks://{id}")(read)
        with self.assertRaises(ValueError):
            resources.resource("test-checks://one")(resources.resource("test-checks://one")(lambda: ""))


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
