"""SIGTERM ends a command the way Ctrl-C does, in this process (pytest's main thread)."""

from __future__ import annotations

import os
import signal

import anyio
import anyio.lowlevel
import pytest

from glyphoxa_mcp.cli.signals import Terminated, stopping_on_signal, terminate_like_interrupt


def test_sigterm_cancels_the_run_which_unwinds_and_ends_as_terminated() -> None:
    unwound: list[str] = []

    async def command() -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
            await anyio.sleep_forever()
        finally:
            unwound.append("finally ran")

    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(Terminated), terminate_like_interrupt():
        anyio.run(command)
    assert unwound == ["finally ran"]
    assert signal.getsignal(signal.SIGTERM) is before


def test_sigint_still_ends_as_a_plain_interrupt() -> None:
    async def command() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        await anyio.sleep_forever()

    with pytest.raises(KeyboardInterrupt) as interrupted, terminate_like_interrupt():
        anyio.run(command)
    assert not isinstance(interrupted.value, Terminated)


def test_a_signal_asks_the_body_to_stop_and_interrupts_only_once_it_has() -> None:
    steps: list[str] = []

    async def command() -> None:
        stopped = anyio.Event()
        with stopping_on_signal(lambda: steps.append("asked to stop")):
            os.kill(os.getpid(), signal.SIGTERM)
            with anyio.fail_after(5):
                while not steps:
                    await anyio.sleep(0.01)
            await anyio.lowlevel.checkpoint()  # no cancellation is pending
            steps.append("body ended by itself")
        await stopped.wait()  # the signal, raised again, cancels this

    with pytest.raises(Terminated), terminate_like_interrupt():
        anyio.run(command)
    assert steps == ["asked to stop", "body ended by itself"]
