"""How the HTTP server runs: its log on stderr, an access log an operator can read."""

from __future__ import annotations

import httpx
import pytest

from glyphoxa_mcp.db.database import Database
from tests.server.http_serving import serving


@pytest.mark.parametrize(("log_level", "logged"), [("WARNING", True), ("ERROR", False)])
async def test_each_request_is_logged_on_stderr_at_the_default_level_and_not_at_error(
    db256: Database, capsys: pytest.CaptureFixture[str], log_level: str, logged: bool
) -> None:
    async with serving(db256, log_level=log_level) as base, httpx.AsyncClient() as http:
        assert (await http.get(f"{base}/healthz")).status_code == 200
        assert (await http.get(f"{base}/c/demo/dm/standard/mcp")).status_code == 401

    captured = capsys.readouterr()
    assert captured.out == ""
    assert ('"GET /healthz HTTP/1.1" 200' in captured.err) is logged
    assert ('"GET /c/demo/dm/standard/mcp HTTP/1.1" 401' in captured.err) is logged
    assert "INFO" not in captured.err.replace("INFO:     127.0.0.1", "")  # only access lines
