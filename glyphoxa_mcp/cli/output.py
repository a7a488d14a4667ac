"""Readable terminal tables."""

from __future__ import annotations

from collections.abc import Sequence


def print_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    cells = [[str(value) for value in row] for row in rows]
    widths = [max(len(h), *(len(row[i]) for row in cells)) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            value.rjust(width) if value.isdigit() else value.ljust(width)
            for value, width in zip(values, widths, strict=True)
        ).rstrip()

    print(line(list(headers)))
    print(line(["-" * width for width in widths]))
    for row in cells:
        print(line(row))
