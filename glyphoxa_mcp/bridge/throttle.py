"""At most one pre-fetch per interval per NPC, always for the newest partial transcript.

Speech-to-text sends partial transcripts many times a second; each could start a pre-fetch.
The first partial is fetched at once; later ones within the interval wait, and only the
newest of them is fetched when the interval is over (the trailing edge), so the context
that arrives is for what was said last.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskGroup

log = logging.getLogger(__name__)
INTERVAL_S = 0.3


class Throttle:
    """Calls `fetch(partial)` at most once per `interval_s`, in `tasks`, with the newest
    partial given since the last call; `on_result` receives what each fetch returned."""

    def __init__(
        self,
        fetch: Callable[[str], Awaitable[str]],
        on_result: Callable[[str], Awaitable[None]],
        tasks: TaskGroup,
        interval_s: float = INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._fetch = fetch
        self._on_result = on_result
        self._tasks = tasks
        self.interval_s = interval_s
        self._clock = clock
        # When the latest fetch started, by `clock`: the next starts `interval_s` after.
        self.started_at = -interval_s
        self._newest: str | None = None
        self._scheduled = False
        self.fetches = 0

    def heard(self, partial: str) -> None:
        """A new partial transcript; never waits."""
        self._newest = partial
        if not self._scheduled:
            self._scheduled = True
            self._tasks.start_soon(self._run)

    async def _run(self) -> None:
        wait = self.started_at + self.interval_s - self._clock()
        if wait > 0:
            await anyio.sleep(wait)
        partial, self._newest, self._scheduled = self._newest, None, False
        if partial is None:
            return
        self.started_at = self._clock()
        self.fetches += 1
        try:
            result = await self._fetch(partial)
        except Exception:  # a failed pre-fetch must not end the voice session
            log.warning("pre-fetch failed", exc_info=True)
            return
        await self._on_result(result)
