"""SIGTERM stops a command the way Ctrl-C does.

Python dies at once on SIGTERM: no `finally`, no exit hooks, so a process using the embedded
PostgreSQL never tells pgserver that it leaves. Inside `terminate_like_interrupt()` SIGTERM
goes to whatever handles SIGINT at that moment: asyncio's runner (cancel the main task, then
KeyboardInterrupt), uvicorn while it serves (finish the requests in flight, then raise the
signal again) or Python's default (KeyboardInterrupt). The KeyboardInterrupt that ends the
run then becomes `Terminated`, so the command can exit 143 rather than 130.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType


class Terminated(KeyboardInterrupt):
    """SIGTERM ended the command."""


@contextlib.contextmanager
def terminate_like_interrupt() -> Iterator[None]:
    # Only the main thread receives signals (tests call `main` from other threads).
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    terminated = False

    def on_sigterm(_signum: int, frame: FrameType | None) -> None:
        nonlocal terminated
        terminated = True
        interrupt = signal.getsignal(signal.SIGINT)
        if not callable(interrupt):  # SIGINT ignored (a background job) or default
            raise KeyboardInterrupt
        interrupt(signal.SIGINT, frame)

    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        yield
    except KeyboardInterrupt:
        if terminated:
            raise Terminated from None
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def stopping_on_signal(stop: Callable[[], None]) -> Iterator[None]:
    """While inside, the first SIGINT or SIGTERM calls `stop` (quick, and safe in a signal
    handler) to ask the body to end by itself; once it has, the signal is raised again for
    the handlers outside, so the command still ends as interrupted (uvicorn does the same).
    A second signal goes to those handlers at once. An ignored signal stays ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = {
        sig: handler
        for sig in (signal.SIGINT, signal.SIGTERM)
        if (handler := signal.getsignal(sig)) is not signal.SIG_IGN
    }

    def on_signal(signum: int, frame: FrameType | None) -> None:
        received.append(signum)
        if len(received) == 1:
            stop()
            return
        handler = previous[signal.Signals(signum)]
        if not callable(handler):
            raise KeyboardInterrupt
        handler(signum, frame)

    for sig in previous:
        signal.signal(sig, on_signal)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        signal.raise_signal(received[0])


class _ForwardedStdin:
    """fd 0 replaced by a pipe that a daemon thread fills from the real standard input.

    A thread blocked reading the real stdin (the MCP SDK's stdio reader is one) can be
    neither cancelled nor joined until the client writes or closes it; `end()` closes the
    pipe instead, and the reader sees the end of its input now."""

    def __init__(self) -> None:
        self.real = os.dup(0)
        read_end, self.write_end = os.pipe()
        self.wake_read, self.wake_write = os.pipe()
        os.set_blocking(self.wake_write, False)
        os.dup2(read_end, 0)
        os.close(read_end)
        self.thread = threading.Thread(target=self._pump, name="stdin", daemon=True)
        self.thread.start()

    def _pump(self) -> None:
        try:
            while True:
                ready, _, _ = select.select([self.real, self.wake_read], [], [])
                if self.wake_read in ready:
                    return
                data = os.read(self.real, 65536)
                if not data:
                    return
                while data:
                    data = data[os.write(self.write_end, data) :]
        except OSError:
            return
        finally:
            os.close(self.write_end)

    def end(self) -> None:
        with contextlib.suppress(OSError):  # a full wake pipe: woken already
            os.write(self.wake_write, b"\0")

    def restore(self) -> None:
        self.end()
        os.dup2(self.real, 0)
        self.thread.join(timeout=0.5)
        if not self.thread.is_alive():  # else it may still use them: leave them open
            for fd in (self.real, self.wake_read, self.wake_write):
                os.close(fd)


@contextlib.contextmanager
def interruptible_stdin() -> Iterator[Callable[[], None]]:
    """Standard input that the yielded function ends (EOF), whoever is blocked reading it.
    Only in the main thread of a POSIX process whose sys.stdin is fd 0; elsewhere the
    function does nothing."""
    try:
        usable = (
            os.name == "posix"
            and threading.current_thread() is threading.main_thread()
            and sys.stdin is not None
            and sys.stdin.fileno() == 0
        )
    except (AttributeError, OSError, ValueError):  # a replaced or closed sys.stdin
        usable = False
    if not usable:
        yield lambda: None
        return
    forwarded = _ForwardedStdin()
    try:
        yield forwarded.end
    finally:
        forwarded.restore()
