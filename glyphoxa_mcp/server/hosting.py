"""Running the servers: stdio for one tier, or HTTP with every tier at its own path.

HTTP mode serves, for each tier, streamable HTTP at `/<tier>/mcp` and SSE at `/<tier>/sse`
(messages posted to `/<tier>/messages/`), the chosen tier again at `/mcp` and `/sse`, and
`/healthz`. Every endpoint shares the process's one connection pool.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Mapping

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Mount, Route

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.server.tiers import Tier

log = logging.getLogger(__name__)

MCP_PATH = "/mcp"
SSE_PATH = "/sse"
MESSAGE_PATH = "/messages/"


def tier_prefix(tier: Tier) -> str:
    return f"/{tier.value.lower()}"


def _endpoints(server: MCPServer, host: str) -> list[BaseRoute]:
    streamable = server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    sse = server.sse_app(sse_path=SSE_PATH, message_path=MESSAGE_PATH, host=host)
    return [*streamable.routes, *sse.routes]


def build_http_app(
    servers: Mapping[Tier, MCPServer], default_tier: Tier, db: Database, *, host: str
) -> Starlette:
    endpoints = {tier: _endpoints(server, host) for tier, server in servers.items()}

    async def healthz(_request: Request) -> JSONResponse:
        try:
            await db.pool.fetchval("SELECT 1")
        except Exception as exc:  # the answer to a health check is the failure itself
            return JSONResponse({"status": "unavailable", "database": str(exc)}, status_code=503)
        return JSONResponse(
            {
                "status": "ok",
                "tiers": {
                    tier.value: {
                        "streamable_http": tier_prefix(tier) + MCP_PATH,
                        "sse": tier_prefix(tier) + SSE_PATH,
                    }
                    for tier in servers
                },
                "default_tier": default_tier.value,
            }
        )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        # Mounted apps' own lifespans never run; the host runs each session manager.
        async with contextlib.AsyncExitStack() as stack:
            for server in servers.values():
                await stack.enter_async_context(server.session_manager.run())
            yield

    routes: list[BaseRoute] = [Route("/healthz", healthz, methods=["GET"])]
    for tier, tier_routes in endpoints.items():
        routes.append(Mount(tier_prefix(tier), routes=tier_routes))
    routes.extend(endpoints[default_tier])
    return Starlette(routes=routes, lifespan=lifespan)


def build_sse_app(server: MCPServer, db: Database, *, host: str) -> Starlette:
    """One tier over SSE only, at `/sse`, for clients that speak nothing else."""
    sse = server.sse_app(sse_path=SSE_PATH, message_path=MESSAGE_PATH, host=host)

    async def healthz(_request: Request) -> JSONResponse:
        await db.pool.fetchval("SELECT 1")
        return JSONResponse({"status": "ok", "sse": SSE_PATH})

    return Starlette(routes=[Route("/healthz", healthz, methods=["GET"]), *sse.routes])


async def serve_http(app: Starlette, host: str, port: int, log_level: str) -> None:
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level.lower(), lifespan="on")
    await uvicorn.Server(config).serve()
