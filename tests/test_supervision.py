"""The exit past the bound: a server that could not serve for `--unhealthy-exit-s` ends its
process with code 70 so a supervisor starts it again; a problem that clears in time does not."""

from __future__ import annotations

import threading
import time

import pytest

from glyphoxa_mcp.supervision import UNHEALTHY_EXIT_CODE, UnhealthyExit


class Exits:
    def __init__(self) -> None:
        self.codes: list[int] = []
        self.done = threading.Event()

    def __call__(self, code: int) -> None:
        self.codes.append(code)
        self.done.set()


def test_a_problem_that_lasts_past_the_bound_ends_the_process_with_code_70() -> None:
    exits = Exits()
    problems = ["a session manager stopped"]
    with UnhealthyExit(0.2, lambda: problems, exit_process=exits, every_s=0.02):
        assert exits.done.wait(5)
    assert exits.codes[0] == UNHEALTHY_EXIT_CODE == 70


@pytest.mark.slow
def test_a_problem_that_clears_within_the_bound_is_forgiven() -> None:
    exits = Exits()
    started = time.monotonic()

    def problems() -> list[str]:
        # A problem for 0.15 s at a time, with a break between: never 0.3 s without one.
        return ["starting"] if (time.monotonic() - started) % 0.2 < 0.15 else []

    with UnhealthyExit(0.3, problems, exit_process=exits, every_s=0.01):
        assert not exits.done.wait(1.0)
    assert exits.codes == []


def test_a_check_that_raises_is_looked_at_again_not_taken_for_health_or_for_a_problem() -> None:
    exits = Exits()
    calls = 0

    def problems() -> list[str]:
        nonlocal calls
        calls += 1
        if calls % 2:
            raise RuntimeError("dictionary changed size during iteration")
        return ["a background task failing again and again"]

    with UnhealthyExit(0.2, problems, exit_process=exits, every_s=0.02):
        assert exits.done.wait(5)
    assert exits.codes == [UNHEALTHY_EXIT_CODE]
