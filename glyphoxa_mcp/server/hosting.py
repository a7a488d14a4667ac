"""The HTTP server: every viewer of every campaign from one process, the viewer in the path.

    /c/{campaign}/npc/{npc_id}/{tier}/mcp   streamable HTTP, in that NPC's view
    /c/{campaign}/npc/{npc_id}/{tier}/sse   SSE (messages posted to .../messages/)
    /c/{campaign}/dm/{tier}/mcp and /sse    the DM's view
    /c/{campaign}/record/mcp and /sse       the recorder's tools (a recorder token)
    /healthz                                 whether the server can serve, within a second
    /metrics                                 Prometheus metrics (with auth on, a metrics token)

Serving one viewer (`serve --campaign C [--npc ID]`) also keeps the paths of a server made
for one viewer: /{tier}/mcp, /{tier}/sse, and /mcp and /sse for the chosen tier.
Every request passes the HostGuard, then (with auth on) the TokenGate.
"""

from __future__ import annotations

import contextlib
import copy
import errno
import functools
import hmac
import logging
import socket
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
import uvicorn
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from glyphoxa_mcp.access import bearer
from glyphoxa_mcp.db.change_feed import listening
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.errors import (
    ConfigurationError,
    GlyphoxaError,
    InternalError,
    MemoryUnavailableError,
    NotFoundError,
)
from glyphoxa_mcp.server.arrival import StampArrival
from glyphoxa_mcp.server.endpoints import EndpointRegistry, is_endpoint_path
from glyphoxa_mcp.server.http_guard import HostGuard, HostRules
from glyphoxa_mcp.server.http_limits import DEFAULT_MAX_SESSIONS_PER_TOKEN, HttpTimeouts
from glyphoxa_mcp.server.in_flight import SHUTDOWN_GRACE_S
from glyphoxa_mcp.server.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from glyphoxa_mcp.server.outcomes import outcome
from glyphoxa_mcp.server.session_caps import SessionCaps
from glyphoxa_mcp.server.slow_clients import deadline_protocol
from glyphoxa_mcp.server.token_gate import Refused, TokenGate
from glyphoxa_mcp.supervision import Supervisor, UnhealthyExit

log = logging.getLogger(__name__)
HEALTH_TIMEOUT_S = 0.8
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

    def __init__(
        self, registry: EndpointRegistry, gate: TokenGate, caps: SessionCaps, viewer_of: ViewerOf
    ) -> None:
        self.registry = registry
        self.gate = gate
        self.caps = caps
        self.viewer_of = viewer_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        route_path = _route_path(scope)
        if not is_endpoint_path(route_path):
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
            endpoints = self.registry.made(viewer)
            if endpoints is None:
                # Making a viewer's endpoints may take seconds (its scope), but not forever.
                guard = self.registry.app.db.guard
                endpoints = await guard.unless_down(lambda: self.registry.get(viewer))
        except Refused as refusal:
            await _refuse(scope, receive, send, refusal.status, refusal.message)
            return
        except NotFoundError:
            await _refuse(scope, receive, send, 404, f"Not found: {viewer.describe()}.")
            return
        except GlyphoxaError as exc:
            # An outage is told as one (the guard logs it, once); nothing else is.
            error = outcome(exc)
            if not isinstance(error, MemoryUnavailableError):
                log.warning("could not admit a request for %s", viewer.describe(), exc_info=True)
                error = InternalError()
            await _refuse(scope, receive, send, 503, error.message)
            return
        app = endpoints.apps[tier]
        # Without auth, the path's viewer stands for the token.
        holder = f"token {grant.id}" if grant is not None else viewer.describe()
        await self.gate.while_valid(
            grant, lambda: self.caps.serve(holder, route_path, app, scope, receive, send)
        )


def build_http_app(
    db: Database,
    registry: EndpointRegistry,
    gate: TokenGate,
    rules: HostRules,
    *,
    single: Viewer | None = None,
    default_tier: Tier = Tier.STANDARD,
    metrics_token: str | None = None,
    max_sessions_per_token: int = DEFAULT_MAX_SESSIONS_PER_TOKEN,
    unhealthy_exit_s: float | None = None,
) -> ASGIApp:
    """The whole HTTP server. With `single`, only that viewer is served (also at the paths of
    a one-viewer server); otherwise every viewer of every campaign. /metrics (when the
    registry keeps metrics) needs `metrics_token` as a bearer token when auth is on. Each
    token may hold `max_sessions_per_token` sessions and SSE streams open at once. With
    `unhealthy_exit_s`, the process exits (code 70) once it could not serve that long."""
    caps = SessionCaps(max_sessions_per_token)
    supervisor = Supervisor()
    lifespan_up = False

    def problems() -> list[str]:
        """Why calls would fail with the database answering, if they would."""
        found = [] if lifespan_up else ["not serving (starting or stopping)"]
        return found + supervisor.problems() + registry.problems()

    async def healthz(_request: Request) -> JSONResponse:
        database = await db.guard.confirm(HEALTH_TIMEOUT_S)
        found = problems()
        healthy = database and not found
        body: dict[str, Any] = {
            "status": "ok" if healthy else "unavailable",
            "database": "ok" if database else "unavailable",
            "serving": single.describe() if single else "every campaign",
            "auth": "token" if gate.required else "none",
            "tasks": [task.report() for task in supervisor.tasks() if task.essential],
            "session_managers": registry.session_managers(),
            "background": {
                "running": sum(1 for task in supervisor.tasks() if not task.essential),
                "contained_errors": supervisor.contained,
            },
        }
        if found:
            body["problems"] = found
        return JSONResponse(body, status_code=200 if healthy else 503)

    async def metrics_page(request: Request) -> Response:
        metrics = registry.settings.metrics
        if metrics is None:
            return JSONResponse({"error": "Not found."}, status_code=404)
        if gate.required:
            given = bearer(request.headers.get("authorization"))
            if metrics_token is None:
                return JSONResponse(
                    {"error": "Metrics need a token: set GLYPHOXA_METRICS_TOKEN for serve."},
                    status_code=403,
                )
            if given is None or not hmac.compare_digest(given, metrics_token):
                return JSONResponse(
                    {"error": "This page needs 'Authorization: Bearer <metrics token>'."},
                    status_code=401,
                    headers={"WWW-Authenticate": 'Bearer realm="glyphoxa-metrics"'},
                )
        return Response(metrics.exposition(), media_type=METRICS_CONTENT_TYPE)

    def door(viewer_of: ViewerOf) -> ViewerDoor:
        return ViewerDoor(registry, gate, caps, viewer_of)

    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics_page, methods=["GET"]),
        Mount("/c/{campaign}/npc/{npc_id}/{tier}", app=door(npc_path_viewer)),
        Mount("/c/{campaign}/dm/{tier}", app=door(dm_path_viewer)),
        Mount("/c/{campaign}/record", app=door(recorder_path_viewer)),
    ]
    if single is not None:
        for segment, tier in TIERS_BY_PATH.items():
            routes.append(Mount(f"/{segment}", app=door(fixed_viewer(single, tier))))
        routes.append(Mount("", app=door(fixed_viewer(single, default_tier))))

    if registry.settings.metrics is not None:
        registry.settings.metrics.watch(db, registry.subscriptions_held)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        nonlocal lifespan_up
        # Every background task runs under the supervisor: what one raises is contained
        # there and never reaches this task group (which would stop every session manager).
        async with anyio.create_task_group() as tasks, db.guard.running(supervisor):
            registry.run_in(tasks, supervisor)
            gate.run_in(supervisor.task_group(tasks))
            tasks.start_soon(supervisor.beat)
            tasks.start_soon(
                functools.partial(
                    supervisor.keep_running,
                    "event loop lag",
                    registry.admission.watch_loop,
                    essential=False,
                )
            )
            async with listening(
                db.location.dsn,
                registry.on_change,
                on_resync=registry.on_resync,
                supervisor=supervisor,
            ) as feed:
                forget = db.guard.on_recovered(feed.nudge)
                lifespan_up = True
                try:
                    with exit_when_unhealthy():
                        yield
                finally:
                    lifespan_up = False
                    forget()
            tasks.cancel_scope.cancel()

    def exit_when_unhealthy() -> contextlib.AbstractContextManager[object]:
        if unhealthy_exit_s is None:
            return contextlib.nullcontext()
        return UnhealthyExit(unhealthy_exit_s, problems)

    return StampArrival(HostGuard(Starlette(routes=routes, lifespan=lifespan), rules))


def access_logged(log_level: str) -> bool:
    """Whether each request is logged: at every level but ERROR, which asks for errors only.
    An operator expects an HTTP server's access log without raising the level of the rest."""
    return log_level.upper() != "ERROR"


def log_config(log_level: str) -> dict[str, Any]:
    """uvicorn's logging, on stderr (stdout may be a protocol stream or a script's pipe): its
    own messages at `log_level`, and one line a request (`access_logged`)."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    for handler in config["handlers"].values():
        handler["stream"] = "ext://sys.stderr"
    level = log_level.upper()
    config["loggers"]["uvicorn"]["level"] = level
    config["loggers"]["uvicorn.error"]["level"] = level
    config["loggers"]["uvicorn.access"]["level"] = "INFO" if access_logged(level) else level
    return config


def listening_socket(host: str, port: int) -> socket.socket:
    """The server's socket, bound here so a port in use is one clear error, not a traceback
    from inside the server's start-up."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named, not left 0: asyncio sets TCP_NODELAY on accepted connections only
    # then, and without it every small reply on a kept-alive connection waits ~40 ms.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        reason = "the port is in use" if exc.errno == errno.EADDRINUSE else exc.strerror
        raise ConfigurationError(
            f"Cannot listen on {host}:{port}: {reason}. Choose another with --port, or stop "
            "the process using it."
        ) from None
    sock.set_inheritable(True)
    return sock


def server_config(
    app: ASGIApp, host: str, port: int, log_level: str, timeouts: HttpTimeouts
) -> uvicorn.Config:
    """uvicorn's settings for `app`: logs on stderr, the lifespan run, and the deadlines of
    `timeouts` for clients slow to send a request (`slow_clients`)."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        # The levels are set in the log config: uvicorn's log_level would set the access
        # log's too, and hide it at the default WARNING.
        log_level=None,
        access_log=access_logged(log_level),
        lifespan="on",
        log_config=log_config(log_level),
        http=deadline_protocol(timeouts),
        # On SIGINT or SIGTERM, calls in flight get this long to finish (the DEEP deadline is
        # 4 s by default); then they are cancelled and the server stops.
        timeout_graceful_shutdown=SHUTDOWN_GRACE_S,
    )


async def serve_http(
    app: ASGIApp, sock: socket.socket, log_level: str, timeouts: HttpTimeouts
) -> None:
    """Serve `app` on `sock` (from `listening_socket`) until SIGINT or SIGTERM."""
    host, port = sock.getsockname()[:2]
    config = server_config(app, host, port, log_level, timeouts)
    with sock:
        await uvicorn.Server(config).serve(sockets=[sock])
