"""What is wrong with a campaign or import file, all of it at once: each problem with its
place (file:line:column), the field and the rule, in the order they stand in the file. (pure)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from glyphoxa_mcp.errors import InvalidInputError

# A file that breaks more rules than this is probably not the file meant; the first ones
# are enough to see that, and the count says how many more there are.
MAX_SHOWN = 50


@dataclass(frozen=True)
class Problem:
    source: str
    line: int | None  # 1-based; None when the place is the whole file
    column: int | None
    field: str
    rule: str

    @property
    def place(self) -> str:
        if self.line is None:
            return self.source
        if self.column is None:
            return f"{self.source}:{self.line}"
        return f"{self.source}:{self.line}:{self.column}"

    def __str__(self) -> str:
        field = f"{self.field}: " if self.field else ""
        return f"{self.place}: {field}{self.rule}"


Path = tuple[str | int, ...]


def field_name(path: Path) -> str:
    """('entities', 1, 'type') -> 'entities[1].type'."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _order(problem: Problem) -> tuple[int, int]:
    return (problem.line or 0, problem.column or 0)


class FileProblems(InvalidInputError):
    """The file breaks the rules below; nothing of it was stored."""

    def __init__(self, source: str, problems: Iterable[Problem]) -> None:
        self.problems = sorted(problems, key=_order)
        shown = [str(p) for p in self.problems[:MAX_SHOWN]]
        hidden = len(self.problems) - len(shown)
        if hidden:
            shown.append(f"... and {hidden} more {'problem' if hidden == 1 else 'problems'}.")
        if len(self.problems) == 1:
            message = shown[0]
        else:
            message = f"{source} has {len(self.problems)} problems; nothing was stored:\n" + (
                "\n".join(shown)
            )
        super().__init__(message, field=self.problems[0].field or None)


def refuse(source: str, problems: Iterable[Problem]) -> None:
    """Raise FileProblems when there are any."""
    found = list(problems)
    if found:
        raise FileProblems(source, found)
