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


def _fake_bindings(calls, elicit=None, sample=None, ask_all=None):
    """Stand-ins for componentize-py's ``wit_world.imports.ask`` and
    ``toolhost_tool_types`` and ``componentize_py_types`` (same names and
    fields), for ``unittest.mock.patch.dict(sys.modules, ...)``."""
    import enum
    import types as pytypes
    from dataclasses import make_dataclass

    class Err(Exception):
        def __init__(self, value):
            super().__init__(value)
            self.value = value

    runtime = pytypes.ModuleType("componentize_py_types")
    runtime.Err = Err
    tool_types = pytypes.ModuleType("wit_world.imports.toolhost_tool_types")
    tool_types.Blob = make_dataclass("Blob", ["media_type", "data"])
    ask = pytypes.ModuleType("wit_world.imports.ask")
    ask.ElicitAnswer_Accept = make_dataclass("ElicitAnswer_Accept", ["value"])
    ask.ElicitAnswer_Decline = make_dataclass("ElicitAnswer_Decline", [])
    ask.ElicitAnswer_Cancel = make_dataclass("ElicitAnswer_Cancel", [])
    ask.Role = enum.Enum("Role", {"USER": 0, "ASSISTANT": 1})
    for case in ("Text", "Image", "Audio"):
        setattr(ask, f"SamplingContent_{case}", make_dataclass(f"SamplingContent_{case}", ["value"]))
    ask.SamplingMessage = make_dataclass("SamplingMessage", ["role", "content"])
    ask.ModelPreferences = make_dataclass(
        "ModelPreferences", ["hints", "cost_priority", "speed_priority", "intelligence_priority"])
    ask.SamplingOptions = make_dataclass(
        "SamplingOptions", ["system_prompt", "max_tokens", "temperature", "stop_sequences", "model_preferences"])
    ask.SamplingResult = make_dataclass("SamplingResult", ["role", "content", "model", "stop_reason"])
    ask.FormQuestion = make_dataclass("FormQuestion", ["message", "requested_schema"])
    ask.SamplingQuestion = make_dataclass("SamplingQuestion", ["messages", "options"])
    ask.Question_User = make_dataclass("Question_User", ["value"])
    ask.Question_Model = make_dataclass("Question_Model", ["value"])
    ask.Question_Roots = make_dataclass("Question_Roots", [])
    ask.KeyedQuestion = make_dataclass("KeyedQuestion", ["key", "question"])
    ask.Root = make_dataclass("Root", ["uri", "name"])
    for case in ("User", "Model", "Roots"):
        setattr(ask, f"Answer_{case}", make_dataclass(f"Answer_{case}", ["value"]))

    def call(name, answer, *args):
        calls.append((name, *args))
        value = answer(ask) if callable(answer) else answer
        if isinstance(value, str):
            raise Err(value)
        return value

    ask.elicit = lambda message, schema: call("elicit", elicit, message, schema)
    ask.sample = lambda messages, options: call("sample", sample, messages, options)
    ask.ask_all = lambda questions: call("ask_all", ask_all, questions)
    world = pytypes.ModuleType("wit_world")
    imports = pytypes.ModuleType("wit_world.imports")
    imports.ask, imports.toolhost_tool_types = ask, tool_types
    world.imports = imports
    return {
        "componentize_py_types": runtime, "wit_world": world, "wit_world.imports": imports,
        "wit_world.imports.ask": ask, "wit_world.imports.toolhost_tool_types": tool_types,
    }


class AskTests(unittest.TestCase):
    SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}

    def test_elicit_answers(self):
        from unittest import mock

        from toolhost import ask

        for answer, expected in [
            (lambda w: w.ElicitAnswer_Accept('{"name": "Ana", "n": 2}'), ask.Answer("accept", {"name": "Ana", "n": 2})),
            (lambda w: w.ElicitAnswer_Decline(), ask.Answer("decline")),
            (lambda w: w.ElicitAnswer_Cancel(), ask.Answer("cancel")),
        ]:
            calls = []
            with mock.patch.dict(sys.modules, _fake_bindings(calls, elicit=answer)):
                got = ask.elicit("Which name?", self.SCHEMA)
            self.assertEqual(got, expected)
            self.assertEqual(got.accepted, expected.action == "accept")
            self.assertEqual(calls, [("elicit", "Which name?", json.dumps(self.SCHEMA, separators=(",", ":")))])

        for bad in ('[1]', 'not json'):
            with mock.patch.dict(sys.modules, _fake_bindings([], elicit=lambda w, bad=bad: w.ElicitAnswer_Accept(bad))):
                with self.assertRaises(ask.AskError):
                    ask.elicit("Which name?", self.SCHEMA)
        with self.assertRaises(ValueError):
            ask.Answer("maybe")

    def test_refusals_raise_ask_error(self):
        from unittest import mock

        from toolhost import AskError, ask

        refusal = "ask: this tool may not ask the user (grant ask = [\"user\"])"
        with mock.patch.dict(sys.modules, _fake_bindings([], elicit=refusal, sample=refusal)):
            with self.assertRaises(AskError) as caught:
                ask.elicit("Which name?", self.SCHEMA)
            self.assertEqual(str(caught.exception), refusal)
            self.assertEqual(caught.exception.message, refusal)
            with self.assertRaises(AskError):
                ask.sample("Hi", max_tokens=10)
        with self.assertRaises(AskError):  # outside a component: nobody to ask
            ask.elicit("Which name?", self.SCHEMA)
        with self.assertRaises(TypeError):
            ask.elicit("Which name?", json.dumps(self.SCHEMA))

    def test_sample_conversions(self):
        from unittest import mock

        from toolhost import Audio, Image, Text, ask

        calls = []
        text_result = lambda w: w.SamplingResult(w.Role.ASSISTANT, w.SamplingContent_Text("A summary."), "m-1", "endTurn")
        with mock.patch.dict(sys.modules, _fake_bindings(calls, sample=text_result)):
            got = ask.sample("Summarise this.", max_tokens=100)
            self.assertEqual(got, ask.Sample("assistant", "A summary.", "A summary.", "m-1", "endTurn"))
            messages, options = calls[-1][1:]
            self.assertEqual(len(messages), 1)
            self.assertEqual((messages[0].role.name, messages[0].content.value), ("USER", "Summarise this."))
            self.assertEqual((options.system_prompt, options.max_tokens, options.temperature,
                              options.stop_sequences, options.model_preferences), (None, 100, None, [], None))

            ask.sample(
                [ask.user("What is in it?"), ask.Message("user", Image(b"\x89PNG", "image/png")),
                 ask.assistant(Text("A cat.")), ask.user(Audio(b"RIFF"))],
                max_tokens=5, system_prompt="Be brief.", temperature=0, stop_sequences=["\n\n"],
                model_hints=("claude",), intelligence_priority=1,
            )
            messages, options = calls[-1][1:]
            self.assertEqual([m.role.name for m in messages], ["USER", "USER", "ASSISTANT", "USER"])
            self.assertEqual(type(messages[1].content).__name__, "SamplingContent_Image")
            self.assertEqual((messages[1].content.value.media_type, messages[1].content.value.data),
                             ("image/png", b"\x89PNG"))
            self.assertEqual(messages[2].content.value, "A cat.")
            self.assertEqual(type(messages[3].content).__name__, "SamplingContent_Audio")
            self.assertEqual(messages[3].content.value.media_type, "audio/wav")
            self.assertEqual((options.system_prompt, options.max_tokens, options.temperature, options.stop_sequences),
                             ("Be brief.", 5, 0.0, ["\n\n"]))
            self.assertIsInstance(options.temperature, float)
            prefs = options.model_preferences
            self.assertEqual((prefs.hints, prefs.cost_priority, prefs.speed_priority, prefs.intelligence_priority),
                             (["claude"], None, None, 1.0))

        image_result = lambda w: w.SamplingResult(
            w.Role.ASSISTANT, w.SamplingContent_Image(sys.modules["wit_world.imports.toolhost_tool_types"].Blob(
                "image/png", b"img")), "m-2", None)
        with mock.patch.dict(sys.modules, _fake_bindings([], sample=image_result)):
            got = ask.sample("Draw a cat.", max_tokens=1)
        self.assertEqual(got, ask.Sample("assistant", None, Image(b"img", "image/png"), "m-2", None))

    def test_sample_checks_its_arguments(self):
        from toolhost import ask

        for bad in (0, -1, 2**32, 1.5, True, "10"):
            with self.assertRaises(ValueError, msg=repr(bad)):
                ask.sample("Hi", max_tokens=bad)
        with self.assertRaises(TypeError):
            ask.sample("Hi", max_tokens=1, stop_sequences="\n")
        with self.assertRaises(TypeError):
            ask.sample("Hi", max_tokens=1, temperature="hot")
        with self.assertRaises(TypeError):
            ask.sample(["Hi"], max_tokens=1)
        with self.assertRaises(ValueError):
            ask.Message("system", "no such role")
        with self.assertRaises(TypeError):
            ask.Message("user", b"bytes")


class AskAllTests(unittest.TestCase):
    SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}}

    def test_conversions(self):
        from unittest import mock

        from toolhost import Image, ask

        answers = lambda w: [
            w.Answer_User(w.ElicitAnswer_Accept('{"ok": true}')),
            w.Answer_Model(w.SamplingResult(w.Role.ASSISTANT, w.SamplingContent_Text("A title"), "m-1", "endTurn")),
            w.Answer_Roots([w.Root("file:///work", "work"), w.Root("file:///tmp/x", None)]),
            w.Answer_User(w.ElicitAnswer_Decline()),
        ]
        questions = {
            "confirm": ask.form("Go ahead?", self.SCHEMA),
            "title.v-1": ask.conversation([ask.user("A title for this."), ask.user(Image(b"png", "image/png"))],
                                          max_tokens=20, system_prompt="Be brief.", stop_sequences=iter(["\n"]),
                                          model_hints=("claude",), speed_priority=0.5),
            "roots": ask.ROOTS,
            "again": ask.form("Sure?", self.SCHEMA),
        }
        expected = [
            ask.Answer("accept", {"ok": True}),
            ask.Sample("assistant", "A title", "A title", "m-1", "endTurn"),
            [ask.Root("file:///work", "work"), ask.Root("file:///tmp/x")],
            ask.Answer("decline"),
        ]
        for given in (questions, list(questions.items())):
            calls = []
            with mock.patch.dict(sys.modules, _fake_bindings(calls, ask_all=answers)):
                self.assertEqual(ask.ask_all(given), expected)
            [(name, asked)] = calls
            self.assertEqual(name, "ask_all")
            self.assertEqual([q.key for q in asked], ["confirm", "title.v-1", "roots", "again"])
            self.assertEqual([type(q.question).__name__ for q in asked],
                             ["Question_User", "Question_Model", "Question_Roots", "Question_User"])
            form = asked[0].question.value
            self.assertEqual((form.message, form.requested_schema),
                             ("Go ahead?", json.dumps(self.SCHEMA, separators=(",", ":"))))
            messages, options = asked[1].question.value.messages, asked[1].question.value.options
            self.assertEqual([(m.role.name, type(m.content).__name__) for m in messages],
                             [("USER", "SamplingContent_Text"), ("USER", "SamplingContent_Image")])
            self.assertEqual(messages[1].content.value.data, b"png")
            self.assertEqual((options.system_prompt, options.max_tokens, options.temperature, options.stop_sequences),
                             ("Be brief.", 20, None, ["\n"]))
            prefs = options.model_preferences
            self.assertEqual((prefs.hints, prefs.cost_priority, prefs.speed_priority, prefs.intelligence_priority),
                             (["claude"], None, 0.5, None))

    def test_roots(self):
        from unittest import mock

        from toolhost import ask

        calls = []
        roots = lambda w: [w.Answer_Roots([w.Root("file:///work", "work")])]
        with mock.patch.dict(sys.modules, _fake_bindings(calls, ask_all=roots)):
            self.assertEqual(ask.roots(), [ask.Root("file:///work", "work")])
        [(_, asked)] = calls
        self.assertEqual([(q.key, type(q.question).__name__) for q in asked], [("roots", "Question_Roots")])
        with mock.patch.dict(sys.modules, _fake_bindings([], ask_all=lambda w: [w.Answer_Roots([])])):
            self.assertEqual(ask.roots(), [])

    def test_checks_keys_and_questions(self):
        from unittest import mock

        from toolhost import ask

        calls = []
        with mock.patch.dict(sys.modules, _fake_bindings(calls, ask_all=lambda w: [w.Answer_Roots([])])):
            ask.ask_all({"A-z_0.9": ask.ROOTS})
            ask.ask_all({"k" * 64: ask.ROOTS})
            for bad in ("", "k" * 65, "a b", "caf\u00e9", "a\n", "a/b", "a:b"):
                with self.assertRaises(ValueError, msg=repr(bad)):
                    ask.ask_all({bad: ask.ROOTS})
            with self.assertRaises(TypeError):
                ask.ask_all({1: ask.ROOTS})
            with self.assertRaises(ValueError):  # the same key twice
                ask.ask_all([("roots", ask.ROOTS), ("roots", ask.ROOTS)])
            with self.assertRaises(ValueError):
                ask.ask_all({})
            with self.assertRaises(ValueError):
                ask.ask_all({f"q{i}": ask.ROOTS for i in range(9)})
            for bad in ("roots", ask.ROOTS, 3, [ask.ROOTS], [("roots", ask.ROOTS, 1)]):
                with self.assertRaises(TypeError, msg=repr(bad)):
                    ask.ask_all(bad)
            with self.assertRaises(TypeError):
                ask.ask_all({"roots": "roots"})
        self.assertEqual(len(calls), 2)
        with self.assertRaises(TypeError):
            ask.form("Go ahead?", json.dumps(self.SCHEMA))
        with self.assertRaises(TypeError):
            ask.form(None, self.SCHEMA)
        with self.assertRaises(ValueError):
            ask.conversation("Hi", max_tokens=0)
        with self.assertRaises(TypeError):
            ask.conversation("Hi", max_tokens=1, model_hints="claude")
        with self.assertRaises(TypeError):
            ask.Question("model", messages="Hi")
        with self.assertRaises(ValueError):
            ask.Question("system")

    def test_refusals_raise_ask_error(self):
        from unittest import mock

        from toolhost import AskError, ask

        refusal = ("tool `t` may not ask the client for its roots: the operator grants it with "
                   "`ask = [\"roots\"]` in [tools.t] of toolhost.toml")
        with mock.patch.dict(sys.modules, _fake_bindings([], ask_all=refusal)):
            with self.assertRaises(AskError) as caught:
                ask.roots()
            self.assertEqual(caught.exception.message, refusal)
            with self.assertRaises(AskError):
                ask.ask_all({"roots": ask.ROOTS, "ok": ask.form("Go ahead?", self.SCHEMA)})
        for answers in (
            lambda w: [w.Answer_User(w.ElicitAnswer_Cancel())],  # a form's answer to the roots
            lambda w: [],  # no answer
            lambda w: [w.Answer_Roots([]), w.Answer_Roots([])],  # too many
        ):
            with mock.patch.dict(sys.modules, _fake_bindings([], ask_all=answers)):
                with self.assertRaises(AskError):
                    ask.roots()
        bad_json = lambda w: [w.Answer_User(w.ElicitAnswer_Accept("[1]"))]
        with mock.patch.dict(sys.modules, _fake_bindings([], ask_all=bad_json)):
            with self.assertRaises(AskError) as caught:
                ask.ask_all({"confirm": ask.form("Go ahead?", self.SCHEMA)})
            self.assertTrue(caught.exception.message.startswith("question `confirm`: "), caught.exception.message)
        with self.assertRaises(AskError):  # outside a component: nobody to ask
            ask.roots()
        with self.assertRaises(AskError):
            ask.ask_all([("confirm", ask.form("Go ahead?", self.SCHEMA))])


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
