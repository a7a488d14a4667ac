"""The printed Claude Desktop entry works as pasted: launch exactly what it says."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import StdioServerParameters
from mcp.client import Client

from glyphoxa_mcp.domain.tool_names import STRICT_NAME_PATTERN
from tests.cli.runner import run_in_process
from tests.cli.test_db_commands import run_cli

pytestmark = pytest.mark.e2e


async def test_the_printed_entry_starts_a_server_claude_desktop_accepts(tmp_path: Path) -> None:
    assert run_cli("demo", "--data-dir", str(tmp_path)).returncode == 0
    # Printing reads no database: in process, without a process start of its own.
    printed = run_in_process("claude-config", "--data-dir", str(tmp_path))
    assert printed.returncode == 0, printed.stderr
    [entry] = json.loads(printed.stdout)["mcpServers"].values()
    assert Path(entry["command"]).is_absolute()
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=entry["env"])
    with anyio.fail_after(60):
        async with Client(params) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            found = await client.call_tool("memory_query_entities", {"name": "Brannoch"})
    assert len(names) == 4 and all(STRICT_NAME_PATTERN.match(name) for name in names)
    assert found.structured_content["entities"][0]["id"] == "brannoch"


def test_a_temporary_uvx_or_pipx_environment_is_recognised() -> None:
    from glyphoxa_mcp.cli.claude_config_command import temporary_runner

    assert temporary_runner("/home/me/.cache/uv/archive-v0/x1Yz") == "uvx"
    assert temporary_runner("/home/me/.local/pipx/.cache/4b3a") == "pipx run"
    assert temporary_runner("/home/me/.local/share/uv/tools/glyphoxa-mcp") is None
    assert temporary_runner("/home/me/glyphoxa-mcp/.venv") is None


def test_from_a_temporary_environment_it_says_to_install_first(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from glyphoxa_mcp.cli import main

    monkeypatch.setattr("sys.prefix", "/home/me/.cache/uv/archive-v0/x1Yz")
    assert main(["claude-config", "--campaign", "demo"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "uv tool install glyphoxa-mcp" in captured.err and "uvx" in captured.err


def test_log_level_is_accepted_after_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    from glyphoxa_mcp.cli import build_parser

    monkeypatch.delenv("GLYPHOXA_LOG_LEVEL", raising=False)
    after = build_parser().parse_args(["serve", "--campaign", "demo", "--log-level", "debug"])
    before = build_parser().parse_args(["--log-level", "INFO", "serve"])
    nested = build_parser().parse_args(["token", "list", "--log-level", "ERROR"])
    assert (after.log_level, before.log_level, nested.log_level) == ("DEBUG", "INFO", "ERROR")
