"""The printed Claude Desktop entry works as pasted: launch exactly what it says."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from mcp import StdioServerParameters
from mcp.client import Client

from glyphoxa_mcp.server.tool_names import STRICT_NAME_PATTERN
from tests.cli.test_db_commands import run_cli


async def test_the_printed_entry_starts_a_server_claude_desktop_accepts(tmp_path: Path) -> None:
    assert run_cli("demo", "--data-dir", str(tmp_path)).returncode == 0
    printed = run_cli("claude-config", "--data-dir", str(tmp_path))
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
