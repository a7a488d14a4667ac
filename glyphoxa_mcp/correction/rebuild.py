"""An index rebuilt in a thread while the one in use keeps being patched.

Name indexes are patched in place after an edit (issue 17); every patch adds to what each
lookup must also search, so after a few hundred changed names the index is built again in
one piece. That takes from a tenth of a second to a second at 10,000 entities: more than a
FAST call may wait, so it runs in a thread of its own, and the patched index is used until
the rebuilt one is ready; the next patch after that starts from it, with the changes made
since it was started. (A thread still shares the interpreter: calls slow down while it
runs, instead of one of them waiting for all of it.)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Rebuild(Generic[T]):
    """`build()` running in a daemon thread; `result` once it is done (None before, and
    if it failed: the patched index is then kept and a later patch starts another)."""

    def __init__(self, build: Callable[[], T], generation: int) -> None:
        self.generation = generation
        """The patch generation the rebuilt index is as of: changes after it go on top."""
        self.result: T | None = None
        self.failed = False
        self._thread = threading.Thread(target=self._run, args=(build,), daemon=True)
        self._thread.start()

    def _run(self, build: Callable[[], T]) -> None:
        try:
            self.result = build()
        except Exception:
            self.failed = True

    @property
    def done(self) -> bool:
        return self.result is not None

    def wait(self, timeout: float | None = None) -> None:
        """Until the thread ends (tests)."""
        self._thread.join(timeout)
