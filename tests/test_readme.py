"""The README opens with the two set-up commands, and CI runs the second one as written."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    return re.findall(r"```sh\n(.+?)\n```", readme)[:2]


def test_the_readme_opens_with_a_run_command_and_a_test_command() -> None:
    run, test = setup_commands()
    assert "pip install ." in run and run.endswith("glyphoxa-mcp demo")
    assert "pytest" in test and ".[dev]" in test


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """After installing Chromium when it is missing (the desk's browser tests need it; the
    README's users have a browser of their own)."""
    _, test = setup_commands()
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    commands = [line for line in ci_lines if line and not line.startswith(("#", "set ", "cd "))]
    assert commands == [".ci/install-chromium", test]


def test_the_readme_claude_snippet_is_the_shape_claude_config_prints() -> None:
    import json

    readme = (ROOT / "README.md").read_text()
    [snippet] = re.findall(r"```json\n(.+?)\n```", readme, re.DOTALL)
    [entry] = json.loads(snippet)["mcpServers"].values()
    assert entry["args"][:3] == ["-m", "glyphoxa_mcp", "serve"]
    assert "underscore" in entry["args"]
