"""The HTTP server on a free loopback port in the test's own process, over a test database."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from typing import Any

import anyio
import uvicorn
from httpx2 import AsyncClient as McpHttpClient
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from glyphoxa_mcp.app import App
from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.config import Settings
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.tiers import Tier, TierPolicy
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.providers.embeddings import offline_embedder
from glyphoxa_mcp.server.admission import Admission
from glyphoxa_mcp.server.endpoints import EndpointRegistry, EndpointSettings
from glyphoxa_mcp.server.hosting import build_http_app, server_config
from glyphoxa_mcp.server.http_guard import HostRules
from glyphoxa_mcp.server.http_limits import DEFAULT_MAX_SESSIONS_PER_TOKEN, HttpTimeouts
from glyphoxa_mcp.server.metrics import Metrics
from glyphoxa_mcp.server.token_gate import TokenGate
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.conftest import unhurried


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.asynccontextmanager
async def mcp_client(url: str, *, timeout: float = 30, **kw: Any) -> AsyncIterator[Client]:
    """A real MCP client over streamable HTTP (the handshake-era protocol) at `url`."""
    http = McpHttpClient(timeout=timeout)
    transport = streamable_http_client(url, http_client=http)
    async with http, Client(transport, mode="legacy", **kw) as client:  # type: ignore[arg-type]
        yield client


async def load_demo(db: Database) -> CampaignMemory:
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db, file, "demo")
    return CampaignMemory(db, "demo")


@contextlib.asynccontextmanager
async def serving(
    db: Database,
    *,
    auth: bool = True,
    single: Viewer | None = None,
    policies: dict[Tier, TierPolicy] | None = None,
    metrics: Metrics | None = None,
    metrics_token: str | None = None,
    max_sessions_per_token: int = DEFAULT_MAX_SESSIONS_PER_TOKEN,
    timeouts: HttpTimeouts | None = None,
    write_deadline_ms: int | None = None,
    admission: Admission | None = None,
    log_level: str = "WARNING",
) -> AsyncIterator[str]:
    """The HTTP app on a free loopback port, in this process, with `serve`'s uvicorn settings;
    its base URL. Deadlines are unhurried unless `policies` are given (and the recorder's
    write deadline `serve`'s default unless `write_deadline_ms` is)."""
    settings = (
        Settings() if write_deadline_ms is None else Settings(write_deadline_ms=write_deadline_ms)
    )
    registry = EndpointRegistry(
        App(settings, db, offline_embedder(db.embedding_dim), chat=None),
        EndpointSettings(
            policies or {tier: unhurried(tier) for tier in Tier},
            metrics=metrics,
            admission=admission,
        ),
        only=single,
    )
    app = build_http_app(
        db,
        registry,
        TokenGate(AccessTokens(db) if auth else None),
        HostRules(["memory.example"], ["https://vtt.example"]),
        single=single,
        metrics_token=metrics_token,
        max_sessions_per_token=max_sessions_per_token,
    )
    port = free_port()
    server = uvicorn.Server(
        server_config(app, "127.0.0.1", port, log_level, timeouts or HttpTimeouts())
    )
    # A task of its own, not a task group's: pytest-asyncio tears fixtures down in another task.
    running = asyncio.create_task(server.serve())
    try:
        with anyio.fail_after(20):
            while not server.started:
                assert not running.done(), "the server stopped while starting"
                await anyio.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        with anyio.fail_after(20):
            await running
