"""How long to wait before the next reconnection attempt. (pure)"""

from __future__ import annotations

from dataclasses import dataclass

FIRST_S = 1.0
LONGEST_S = 30.0


@dataclass
class Backoff:
    """1 s, doubling each failed attempt, never more than 30 s; back to 1 s after a success."""

    first_s: float = FIRST_S
    longest_s: float = LONGEST_S
    _next_s: float | None = None

    def next(self) -> float:
        delay = self.first_s if self._next_s is None else self._next_s
        self._next_s = min(delay * 2, self.longest_s)
        return delay

    def reset(self) -> None:
        self._next_s = None
