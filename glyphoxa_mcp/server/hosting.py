"""The HTTP server: every viewer of every campaign from one process, the viewer in the path.

    /c/{campaign}/npc/{npc_id}/{tier}/mcp   streamable HTTP, in that NPC's view
    /c/{campaign}/npc/{npc_id}/{tier}/sse   SSE (messages posted to .../messages/)
    /c/{campaign}/dm/{tier}/mcp and /sse    the DM's view
    /c/{campaign}/record/mcp and /sse       the recorder's tools (a recorder token)
    /healthz                                 whether the database answers, within a second

Serving one viewer (`serve --campaign C [--npc ID]`) also keeps the paths of a server made
for one viewer: /{tier}/mcp, /{tier}/sse, and /mcp and /sse for the chosen tier.
Every request passes the HostGuard, then (with auth on) the TokenGate.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import uvicorn
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from glyphoxa_mcp.access import Viewer
from glyphoxa_mcp.db.change_feed import listening
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import GlyphoxaError, NotFoundError
from glyphoxa_mcp.server.endpoints import EndpointRegistry, is_endpoint_path
from glyphoxa_mcp.server.http_guard import HostGuard, HostRules
from glyphoxa_mcp.server.tiers import Tier
from glyphoxa_mcp.server.token_gate import Refused, TokenGate

log = logging.getLogger(__name__)
HEALTH_TIMEOUT_S = 0.8
SHUTDOWN_GRACE_S = 5
TIERS_BY_PATH = {tier.value.lower(): tier for tier in Tier}

ViewerOf = Callable[[dict[str, Any]], tuple[Viewer, Tier | None]]


def _route_path(scope: Scope) -> str:
    path, root = str(scope["path"]), str(scope.get("root_path", ""))
    return path[len(root) :] if root and path.startswith(root) else path


def _tier(segment: str) -> Tier:
    tier = TIERS_BY_PATH.get(segment)
    if tier is None:
        raise NotFoundError("No such tier: use fast, standard or deep.")
    return tier


def npc_path_viewer(params: dict[str, Any]) -> tuple[Viewer, Tier]:
    return Viewer.npc(params["campaign"], params["npc_id"]), _tier(params["tier"])


def dm_path_viewer(params: dict[str, Any]) -> tuple[Viewer, Tier]:
    return Viewer.dm(params["campaign"]), _tier(params["tier"])


def recorder_path_viewer(params: dict[str, Any]) -> tuple[Viewer, Tier | None]:
    return Viewer.recorder(params["campaign"]), None


def fixed_viewer(viewer: Viewer, tier: Tier) -> ViewerOf:
    return lambda _params: (viewer, tier)


async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, message: str) -> None:
    headers = {"WWW-Authenticate": 'Bearer realm="glyphoxa-memory"'} if status == 401 else None
    await JSONResponse({"error": message}, status_code=status, headers=headers)(
        scope, receive, send
    )


class ViewerDoor:
    """Mounted at a path that names a viewer: admits the request as that viewer and hands it
    to the viewer's endpoint of the tier the path names."""

    def __init__(self, registry: EndpointRegistry, gate: TokenGate, viewer_of: ViewerOf) -> None:
        self.registry = registry
        self.gate = gate
        self.viewer_of = viewer_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not is_endpoint_path(_route_path(scope)):
            await _refuse(scope, receive, send, 404, "Not found.")
            return
        try:
            viewer, tier = self.viewer_of(scope.get("path_params", {}))
        except (NotFoundError, ValidationError):
            await _refuse(scope, receive, send, 404, "Not found: no such viewer or tier.")
            return
        headers = dict(scope["headers"])
        authorization = headers.get(b"authorization", b"").decode("latin-1") or None
        try:
            grant = await self.gate.admit(authorization, viewer, tier)
            endpoints = await self.registry.get(viewer)
        except Refused as refusal:
            await _refuse(scope, receive, send, refusal.status, refusal.message)
            return
        except NotFoundError:
            await _refuse(scope, receive, send, 404, f"Not found: {viewer.describe()}.")
            return
        except GlyphoxaError:
            log.warning("could not admit a request for %s", viewer.describe(), exc_info=True)
            await _refuse(scope, receive, send, 503, "Memory unavailable; try again shortly.")
            return
        app = endpoints.apps[tier]
        await self.gate.while_valid(grant, lambda: app(scope, receive, send))


def build_http_app(
    db: Database,
    registry: EndpointRegistry,
    gate: TokenGate,
    rules: HostRules,
    *,
    single: Viewer | None = None,
    default_tier: Tier = Tier.STANDARD,
) -> ASGIApp:
    """The whole HTTP server. With `single`, only that viewer is served (also at the paths of
    a one-viewer server); otherwise every viewer of every campaign."""

    async def healthz(_request: Request) -> JSONResponse:
        healthy = False
        with anyio.move_on_after(HEALTH_TIMEOUT_S):
            try:
                healthy = await db.pool.fetchval("SELECT 1") == 1
            except Exception:  # whatever the driver says, the answer is "unavailable"
                healthy = False
        body: dict[str, Any] = {
            "status": "ok" if healthy else "unavailable",
            "database": "ok" if healthy else "unavailable",
            "serving": single.describe() if single else "every campaign",
            "auth": "token" if gate.required else "none",
        }
        return JSONResponse(body, status_code=200 if healthy else 503)

    def door(viewer_of: ViewerOf) -> ViewerDoor:
        return ViewerDoor(registry, gate, viewer_of)

    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET"]),
        Mount("/c/{campaign}/npc/{npc_id}/{tier}", app=door(npc_path_viewer)),
        Mount("/c/{campaign}/dm/{tier}", app=door(dm_path_viewer)),
        Mount("/c/{campaign}/record", app=door(recorder_path_viewer)),
    ]
    if single is not None:
        for segment, tier in TIERS_BY_PATH.items():
            routes.append(Mount(f"/{segment}", app=door(fixed_viewer(single, tier))))
        routes.append(Mount("", app=door(fixed_viewer(single, default_tier))))

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with anyio.create_task_group() as tasks:
            registry.run_in(tasks)
            async with listening(db.location.dsn, registry.on_change):
                yield
            tasks.cancel_scope.cancel()

    return HostGuard(Starlette(routes=routes, lifespan=lifespan), rules)


def log_config() -> dict[str, Any]:
    """uvicorn's logging, on stderr: stdout may be a protocol stream or a script's pipe."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    for handler in config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    return config


async def serve_http(app: ASGIApp, host: str, port: int, log_level: str) -> None:
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level.lower(),
        lifespan="on",
        log_config=log_config(),
        # On SIGINT or SIGTERM, calls in flight get this long to finish (the DEEP deadline is
        # 4 s by default); then they are cancelled and the server stops.
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )
    await uvicorn.Server(config).serve()
