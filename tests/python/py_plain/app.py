"""Test guest: a plain component in Python with one function, `add`."""

import wit_world


class WitWorld(wit_world.WitWorld):
    def add(self, a: int, b: int) -> int:
        return a + b
