"""Names that say what a file is: no two modules of the package share a file name, and
neither do two test modules, so a traceback, a search or a docstring's "see x.py" cannot
mean the wrong one."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def repeated_names(paths: list[Path]) -> dict[str, list[str]]:
    by_name: dict[str, list[str]] = defaultdict(list)
    for path in paths:
        by_name[path.name].append(str(path.relative_to(ROOT)))
    return {name: sorted(found) for name, found in by_name.items() if len(found) > 1}


def test_no_two_modules_of_the_package_share_a_file_name() -> None:
    modules = [p for p in (ROOT / "glyphoxa_mcp").rglob("*.py") if p.name != "__init__.py"]
    assert len(modules) > 200
    assert repeated_names(modules) == {}


def test_no_two_test_modules_share_a_file_name() -> None:
    tests = list((ROOT / "tests").rglob("test_*.py"))
    assert len(tests) > 100
    assert repeated_names(tests) == {}


def test_a_repeated_name_is_found() -> None:
    found = repeated_names(
        [ROOT / "glyphoxa_mcp" / "app.py", ROOT / "glyphoxa_mcp" / "web" / "app.py"]
    )
    assert found == {"app.py": ["glyphoxa_mcp/app.py", "glyphoxa_mcp/web/app.py"]}
