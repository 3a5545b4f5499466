"""Test guest and benchmark tool: a plain component in Python that
evaluates Python (`eval`) and runs statements (`exec`)."""

import contextlib
import io

import wit_world
from componentize_py_types import Err


def _failure(error: BaseException) -> Err:
    return Err(f"{type(error).__name__}: {error}")


class WitWorld(wit_world.WitWorld):
    def eval(self, expression: str) -> str:
        try:
            return repr(eval(expression, {"__builtins__": __builtins__}))
        except BaseException as error:  # the guest's error, for the caller
            raise _failure(error)

    def exec(self, statements: str) -> str:
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(statements, {"__builtins__": __builtins__})
        except BaseException as error:
            raise _failure(error)
        return printed.getvalue()
