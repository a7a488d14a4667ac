"""Reading what a user hands us within bounds: text longer than a limit, or JSON nested
deeper than one, is refused with its place (file:line:column) before a parser sees it, so a
hostile or broken file costs neither the memory nor the stack it asks for. (pure)"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any

from glyphoxa_mcp.errors import InvalidInputError

# Far above any real export (a Foundry world, a LoCoMo file, a long session's transcript).
MAX_FILE_CHARS = 64 * 1024 * 1024
# One line of JSON Lines: an utterance, even with its words' timings.
MAX_LINE_CHARS = 1024 * 1024
# Real documents nest a dozen levels; the JSON parser and what reads its result recurse.
MAX_DEPTH = 100

# A string (to its closing quote, or to the end when it has none) or a bracket.
_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)


def line_column(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column of `text[index]`."""
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


def check_length(text: str, source: str, limit: int = MAX_FILE_CHARS) -> None:
    """An error at the first character past `limit`, for text longer than that."""
    if len(text) > limit:
        line, column = line_column(text, limit)
        raise InvalidInputError(
            f"{source}:{line}:{column}: the file is longer than {limit:,} characters, "
            "the most accepted."
        )


def load_json(
    text: str, source: str, *, max_chars: int = MAX_FILE_CHARS, max_depth: int = MAX_DEPTH
) -> Any:
    """A whole JSON file; errors say source:line:column."""
    check_length(text, source, max_chars)
    return _parse(text, max_depth, lambda line, column: f"{source}:{line}:{column}")


def load_json_line(
    text: str, where: str, *, max_chars: int = MAX_LINE_CHARS, max_depth: int = MAX_DEPTH
) -> Any:
    """One line of JSON Lines; `where` is source:line, and errors add the column."""
    if len(text) > max_chars:
        raise InvalidInputError(f"{where}: the line is longer than {max_chars:,} characters.")
    return _parse(text, max_depth, lambda _, column: f"{where}:{column}")


def _parse(text: str, max_depth: int, place: Callable[[int, int], str]) -> Any:
    too_deep = _too_deep(text, max_depth)
    if too_deep is not None:
        where = place(*line_column(text, too_deep))
        raise InvalidInputError(f"{where}: nested deeper than {max_depth} levels.")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        where = place(exc.lineno, exc.colno)
        raise InvalidInputError(f"{where}: not valid JSON ({exc.msg}).") from None
    except ValueError:  # an integer with more digits than Python converts
        where = place(*line_column(text, _first_long_number(text)))
        digits = sys.get_int_max_str_digits()
        raise InvalidInputError(f"{where}: a number has more than {digits} digits.") from None


def _first_long_number(text: str) -> int:
    match = re.search(rf"\d{{{sys.get_int_max_str_digits() + 1},}}", text)
    return match.start() if match else 0


def _too_deep(text: str, max_depth: int) -> int | None:
    """The index of the first bracket, outside strings, that opens level `max_depth + 1`."""
    if text.count("[") + text.count("{") <= max_depth:
        return None
    depth = 0
    for match in _STRING_OR_BRACKET.finditer(text):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                return match.start()
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
    return None
