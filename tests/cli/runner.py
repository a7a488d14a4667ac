"""The CLI in this process, as `main(argv)` with its own environment and captured output.

A subprocess per command costs a Python start and imports (about a second here); the logic
of a command is the same in process. Tests that are about the process itself (exit codes
of the console script, signals, an embedded server shared between processes) keep
`run_cli` from test_db_commands.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

from glyphoxa_mcp.cli import main


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


@contextlib.contextmanager
def environment(env: dict[str, str] | None) -> Iterator[None]:
    """GLYPHOXA_* variables as a new user has them (none) plus `env`, restored after."""
    saved = dict(os.environ)
    for key in [k for k in os.environ if k.startswith("GLYPHOXA_")]:
        del os.environ[key]
    os.environ.update(env or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def standard_input(text: str | None) -> Iterator[None]:
    saved = sys.stdin
    sys.stdin = io.StringIO(text or "")
    try:
        yield
    finally:
        sys.stdin = saved


def run_in_process(*args: str, env: dict[str, str] | None = None, stdin: str | None = None) -> Ran:
    """`glyphoxa-mcp ARGS` through `main`, in a thread of its own: main runs its own event
    loop, which an async test's running loop would not allow in this thread."""
    out, err = io.StringIO(), io.StringIO()
    code: list[int] = []

    def call() -> None:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            standard_input(stdin),
        ):
            try:
                code.append(main(list(args)))
            except SystemExit as exit_:  # argparse's usage errors and --help
                code.append(exit_.code if isinstance(exit_.code, int) else 2)

    with environment(env):
        worker = threading.Thread(target=call)
        worker.start()
        worker.join(timeout=120)
    assert code, f"glyphoxa-mcp {' '.join(args)} did not finish"
    return Ran(code[0], out.getvalue(), err.getvalue())
