"""The last value built for each key, to serve while memory is unavailable. (pure)"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

T = TypeVar("T")
DEFAULT_CAPACITY = 256


class LastGood(Generic[T]):
    """Bounded: the least recently kept go first."""

    def __init__(
        self, capacity: int = DEFAULT_CAPACITY, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.capacity = capacity
        self.clock = clock
        self._kept: OrderedDict[Hashable, tuple[T, float]] = OrderedDict()

    def keep(self, key: Hashable, value: T) -> None:
        self._kept[key] = (value, self.clock())
        self._kept.move_to_end(key)
        while len(self._kept) > self.capacity:
            self._kept.popitem(last=False)

    def clear(self) -> None:
        self._kept.clear()

    def get(self, key: Hashable) -> tuple[T, float] | None:
        """The value last kept under `key` and its age in seconds."""
        found = self._kept.get(key)
        if found is None:
            return None
        value, kept_at = found
        return value, self.clock() - kept_at
