"""/metrics: Prometheus text over the HTTP server, behind the Host checks and, with auth on,
the metrics token."""

from __future__ import annotations

import anyio
import httpx
import pytest
from httpx2 import AsyncClient as McpHttpClient
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.server.metrics import Metrics
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from tests.server.http_serving import load_demo, serving

pytestmark = pytest.mark.e2e

METRICS_TOKEN = "scrape-me-please-0123456789"


@pytest.fixture
def db(db256: Database) -> Database:
    return db256


async def test_metrics_count_calls_by_tool_tier_and_campaign_and_need_the_token(
    db: Database,
) -> None:
    await load_demo(db)
    _, token = await AccessTokens(db).create(Viewer.npc("demo", "ysolde"))
    bearer = {"Authorization": f"Bearer {token.token}"}
    async with serving(db, metrics=Metrics(), metrics_token=METRICS_TOKEN) as base:
        http = McpHttpClient(headers=bearer, timeout=30)
        url = f"{base}/c/demo/npc/ysolde/fast/mcp"
        with anyio.fail_after(30):
            async with http, Client(streamable_http_client(url, http_client=http)) as client:
                await client.call_tool("memory.query_entities", {"name": "Berrit"})
                refused = await client.call_tool("memory.search_facts", {"query": "bell"})
        assert refused.is_error
        async with httpx.AsyncClient(base_url=base) as plain:
            anonymous = await plain.get("/metrics")
            npc_token = await plain.get("/metrics", headers=bearer)
            elsewhere = await plain.get(
                "/metrics",
                headers={"Host": "evil.example", "Authorization": f"Bearer {METRICS_TOKEN}"},
            )
            page = await plain.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    assert (anonymous.status_code, npc_token.status_code, elsewhere.status_code) == (401, 401, 421)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    text = page.text
    labels = 'campaign="demo",kind="tool",name="memory.query_entities",tier="FAST"'
    assert f"glyphoxa_calls_total{{{labels}}} 1.0" in text
    bucket = 'campaign="demo",kind="tool",le="+Inf",name="memory.query_entities",tier="FAST"'
    assert f"glyphoxa_call_seconds_bucket{{{bucket}}} 1.0" in text
    assert "_created" not in text
    assert 'name="memory.search_facts",reason="refused",tier="FAST"} 1.0' in text
    assert "glyphoxa_memory_degraded 0.0" in text
    assert "glyphoxa_pool_connections_in_use" in text and "glyphoxa_subscriptions" in text


async def test_with_token_auth_and_no_metrics_token_the_page_says_how_to_enable_it(
    db: Database,
) -> None:
    async with serving(db, metrics=Metrics()) as base, httpx.AsyncClient(base_url=base) as http:
        page = await http.get("/metrics")
    assert page.status_code == 403 and "GLYPHOXA_METRICS_TOKEN" in page.json()["error"]


async def test_on_loopback_without_auth_metrics_are_open_and_count_failed_calls(
    db: Database,
) -> None:
    await load_demo(db)
    async with (
        serving(db, auth=False, metrics=Metrics()) as base,
        httpx.AsyncClient(base_url=base) as http,
    ):
        url = f"{base}/c/demo/dm/standard/mcp"
        with anyio.fail_after(30):
            async with Client(url) as client:
                failed = await client.call_tool(
                    "memory.get_session_summary", {"session_id": "never-played"}
                )
        page = await http.get("/metrics")
    assert failed.is_error
    assert page.status_code == 200
    # An unknown session is a bad argument (reason bad_argument), not a failure of ours.
    counted = 'name="memory.get_session_summary",reason="bad_argument",tier="STANDARD"} 1.0'
    assert counted in page.text
