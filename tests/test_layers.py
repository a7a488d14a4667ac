"""The floors hold: the import contracts of pyproject.toml ([tool.importlinter]), and the
read path's start-up without openai."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def test_every_import_contract_is_kept() -> None:
    # No cache: a graph left from another checkout or worker would judge stale imports.
    result = subprocess.run(
        [str(LINT_IMPORTS), "--no-cache", "--no-logo", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.e2e
def test_starting_the_server_and_the_command_leaves_openai_unimported() -> None:
    # What the contracts above check in the graph, checked where it costs: a fresh
    # interpreter importing the MCP server, its HTTP hosting and the command.
    code = (
        "import sys\n"
        "import glyphoxa_mcp.cli, glyphoxa_mcp.server.hosting, glyphoxa_mcp.server.memory_server\n"
        "print(sorted(m for m in sys.modules if m == 'openai' or m.startswith('openai.')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout
