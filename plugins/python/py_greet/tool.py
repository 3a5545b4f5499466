"""`py_greet`: asks the person using the client their name, then the client's model for a one-line greeting (the Python twin of `greet`).

Needs `ask = ["user", "model"]` in the tool's grant; the call's timeout stops while it waits for each answer.

Build: toolhost build plugins/python/py_greet (componentize-py 0.25.1 on PATH).
"""

from toolhost import Effect, ask, prompt, tool

FORM = {
    "type": "object",
    "properties": {"name": {"type": "string", "title": "Your name", "minLength": 1}},
    "required": ["name"],
}


@tool(
    description=prompt("""
        Greet the person using the client: ask their name, then ask the model
        for a one-line greeting.
    """),
    effect=Effect.READ,
)
def greet() -> str:
    answer = ask.elicit("What should I call you?", FORM)
    if not answer.accepted:
        return "No name, no greeting."
    sample = ask.sample(f"Write a one-line greeting for {answer.content['name']}.", max_tokens=60)
    return sample.text if sample.text is not None else "(the model answered without text)"
