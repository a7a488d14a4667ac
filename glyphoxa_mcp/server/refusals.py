"""How a refusal reads: the field and the rule it broke, in at most 1 kB, repeating at most a
short prefix of what was sent. (pure)"""

from __future__ import annotations

import difflib
import re

from glyphoxa_mcp.views.arguments import quoted

MAX_ANSWER = 1024  # bytes of an error message
MAX_PROBLEMS = 5  # problems listed in one answer
NUL = "\x00"


def fit(text: str, limit: int = MAX_ANSWER) -> str:
    """`text`, cut to at most `limit` bytes of UTF-8."""
    encoded = text.encode()
    if len(encoded) <= limit:
        return text
    return encoded[: limit - len("…".encode())].decode(errors="ignore") + "…"


def unknown_name(name: str, known: list[str], what: str = "argument") -> str:
    """A refusal of an unknown name, with the likeliest meant one."""
    squashed = {re.sub(r"[^a-z0-9]", "", k.lower()): k for k in known}
    guess = squashed.get(re.sub(r"[^a-z0-9]", "", name.lower()))
    if guess is None:
        started = [k for k in known if name and k.startswith(name.lower())]
        close = started or difflib.get_close_matches(name[:64], known, n=1, cutoff=0.6)
        guess = close[0] if len(close) == 1 else None
    hint = f"did you mean {guess}?" if guess else f"known: {', '.join(known) or 'none'}"
    return f"unknown {what} {quoted(name)} ({hint})"


def refusal(subject: str, problems: list[str]) -> str:
    """`subject: problem; problem; and N more.`, cut to 1 kB."""
    shown = problems[:MAX_PROBLEMS]
    more = len(problems) - len(shown)
    listed = "; ".join(shown) + (f"; and {more} more" if more else "")
    return fit(f"{subject}: {listed}.")
