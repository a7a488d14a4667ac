"""A progress bar on stderr when it is a terminal; nothing when output is piped or logged."""

from __future__ import annotations

import sys
from typing import TextIO

WIDTH = 30


class Progress:
    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        filled = WIDTH * done // total
        self.stream.write(f"\r{self.label} [{'#' * filled}{' ' * (WIDTH - filled)}] {done}/{total}")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()
