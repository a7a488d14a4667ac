"""Every viewer's MCP endpoints in one process, made when a viewer is first asked for.

A viewer (one NPC, or the DM, of one campaign) gets one MCP server per tier, sharing that
viewer's scope cache and subscriptions; every viewer of a campaign shares the campaign's
memory. Servers are never shared between viewers, so nothing one viewer is told (results,
cached scope, change notifications) can reach another. A campaign's recorder gets the
recorder server (no tiers); the process has one `Recorder` for every campaign's sessions.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup, TaskStatus
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import Response
from starlette.types import ASGIApp, Scope

from glyphoxa_mcp.app import App
from glyphoxa_mcp.db.change_feed import Change
from glyphoxa_mcp.domain.tiers import Tier, TierPolicy
from glyphoxa_mcp.domain.tool_names import NameStyle
from glyphoxa_mcp.domain.viewer import Viewer, ViewerKind
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.recall.hot_budgets import HotBudgets
from glyphoxa_mcp.recording.recorder import Recorder
from glyphoxa_mcp.server.admission import Admission, admission_for
from glyphoxa_mcp.server.busy_door import BusyDoor
from glyphoxa_mcp.server.envelope import EnvelopeCheck
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.metrics import Metrics
from glyphoxa_mcp.server.recorder_server import build_recorder_server
from glyphoxa_mcp.server.session_caps import MCP_PATH, SESSION_IDLE_S, SSE_PATH
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.supervision import Supervisor

log = logging.getLogger(__name__)

MESSAGE_PATH = "/messages/"
# The HostGuard in front of every route checks Host and Origin; the SDK's own check would
# apply a second, different list.
NO_SDK_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def is_endpoint_path(route_path: str) -> bool:
    return route_path in (MCP_PATH, SSE_PATH) or route_path.startswith(MESSAGE_PATH)


@dataclass(frozen=True)
class ViewerEndpoints:
    viewer: Viewer
    subscriptions: HotSubscriptions | None
    # The recorder's one server is under None: it has no tiers.
    apps: dict[Tier | None, ASGIApp]


@dataclass
class SessionManagers:
    """A viewer's servers' session managers: how many were started and run now, and what
    stops them all (when one fails, the viewer's endpoints are made again)."""

    started: int = 0
    running: int = 0
    scopes: list[anyio.CancelScope] = field(default_factory=list)


@dataclass(frozen=True)
class EndpointSettings:
    policies: dict[Tier, TierPolicy]
    style: NameStyle = NameStyle.DOTTED
    budgets: HotBudgets | None = None
    metrics: Metrics | None = None
    # The process's admission control; None: one made for this machine.
    admission: Admission | None = None


class EndpointRegistry:
    """Viewers' endpoints, made on first use under the task group that runs their sessions."""

    def __init__(
        self,
        app: App,
        settings: EndpointSettings,
        only: Viewer | None = None,
    ) -> None:
        """With `only`, that viewer alone is served; otherwise every viewer."""
        self.app = app
        self.settings = settings
        self.only = only
        self._endpoints: dict[Viewer, ViewerEndpoints] = {}
        self._making: dict[Viewer, anyio.Lock] = {}
        # One queue for every viewer's tool calls: they share the database.
        self.admission = settings.admission or admission_for(settings.metrics)
        self._tasks: TaskGroup | None = None
        self._recorder: Recorder | None = None
        self._managers: dict[Viewer, SessionManagers] = {}
        # Viewers whose endpoints were made again after a session manager failed.
        self.remade = 0

    def run_in(self, tasks: TaskGroup, supervisor: Supervisor | None = None) -> None:
        """Sessions of every endpoint, and recording's background work, run in `tasks`,
        which outlives the requests; what they raise is contained by `supervisor`."""
        self._tasks = (supervisor or Supervisor()).task_group(tasks)
        self._recorder = Recorder(self.app, self._tasks)

    def session_managers(self) -> dict[str, int]:
        """How many session managers run, of how many the served viewers need."""
        served = [self._managers.get(viewer, SessionManagers()) for viewer in self._endpoints]
        return {
            "running": sum(m.running for m in served),
            "needed": sum(m.started for m in served),
            "remade": self.remade,
        }

    def problems(self) -> list[str]:
        """How many served viewers have session managers that do not all run (their calls
        would fail). Counted, not named: /healthz answers without a token."""
        stopped = sum(
            1
            for viewer, managers in list(self._managers.items())
            if viewer in self._endpoints and managers.running < managers.started
        )
        stopped_of = counted(stopped, "viewer's", "viewers'")
        return [f"{stopped_of} session managers stopped"] if stopped else []

    def made(self, viewer: Viewer) -> ViewerEndpoints | None:
        """The viewer's endpoints if they are made already (no database needed)."""
        return self._endpoints.get(viewer)

    async def get(self, viewer: Viewer) -> ViewerEndpoints:
        """The viewer's endpoints; NotFoundError when this server does not serve it."""
        made = self._endpoints.get(viewer)
        if made is not None:
            return made
        async with self._making.setdefault(viewer, anyio.Lock()):
            made = self._endpoints.get(viewer)
            if made is None:
                made = await self._make(viewer)
                self._endpoints[viewer] = made
        return made

    async def on_change(self, change: Change) -> None:
        for endpoints in list(self._endpoints.values()):
            if endpoints.viewer.campaign == change.campaign and endpoints.subscriptions:
                await endpoints.subscriptions.on_change(change)

    def subscriptions_held(self) -> int:
        return sum(
            endpoints.subscriptions.held
            for endpoints in list(self._endpoints.values())
            if endpoints.subscriptions is not None
        )

    async def on_resync(self) -> None:
        for endpoints in list(self._endpoints.values()):
            if endpoints.subscriptions is not None:
                await endpoints.subscriptions.resync()

    async def _make(self, viewer: Viewer) -> ViewerEndpoints:
        if viewer.kind is ViewerKind.RECORDER:
            return await self._make_recorder(viewer)
        if self.only not in (None, viewer):
            raise NotFoundError(f"This server does not serve {viewer.describe()}.")
        view = await self.app.view(viewer.campaign, viewer.npc_id)
        memory = view.memory
        if viewer.npc_id is not None:
            # The same answer for an id that is not an entity as for one of another campaign.
            try:
                await memory.graph.get_entity(viewer.npc_id)
            except NotFoundError:
                raise NotFoundError(f"This server does not serve {viewer.describe()}.") from None
        subscriptions = HotSubscriptions(
            memory, viewer.npc_id, on_removal=view.forget_last_hot_contexts
        )
        # The tiers share the viewer's scope: one warm-up serves them all.
        await view.warm_up()
        states = {
            tier: ServerState(view, policy, self.admission)
            for tier, policy in self.settings.policies.items()
        }
        apps: dict[Tier | None, ASGIApp] = {}
        # Shielded (no database here): sessions started for some tiers and then cancelled
        # would keep running in the long-lived task group without being kept.
        with anyio.CancelScope(shield=True):
            made = await self._start_tiers(viewer, states, subscriptions, apps)
        log.info("serving %s", viewer.describe())
        return ViewerEndpoints(viewer, subscriptions, made)

    async def _start_tiers(
        self,
        viewer: Viewer,
        states: dict[Tier, ServerState],
        subscriptions: HotSubscriptions,
        apps: dict[Tier | None, ASGIApp],
    ) -> dict[Tier | None, ASGIApp]:
        for tier, state in states.items():
            server = build_server(
                state,
                self.settings.style,
                self.settings.budgets,
                subscriptions=subscriptions,
                metrics=self.settings.metrics,
            )
            door = BusyDoor(
                self.admission,
                state.policy,
                metrics=self.settings.metrics,
                campaign=viewer.campaign,
            )
            apps[tier] = _http_app(server, answer_early=door.answer)
            await self._run_sessions(server, viewer)
        return apps

    async def _make_recorder(self, viewer: Viewer) -> ViewerEndpoints:
        """A campaign's recorder: served beside every viewer, or beside the one viewer of
        that campaign a single-viewer server serves."""
        if self._recorder is None:
            raise RuntimeError("EndpointRegistry.run_in must be called before serving")
        if self.only is not None and self.only.campaign != viewer.campaign:
            raise NotFoundError(f"This server does not serve {viewer.describe()}.")
        await self.app.memory(viewer.campaign).campaign()  # NotFoundError for none
        server = build_recorder_server(self._recorder, viewer.campaign, self.settings.style)
        app = _http_app(server)
        await self._run_sessions(server, viewer)
        log.info("serving %s", viewer.describe())
        return ViewerEndpoints(viewer, None, {None: app})

    async def _run_sessions(self, server: MCPServer, viewer: Viewer) -> None:
        """Run `server`'s session manager for as long as the registry runs. Should it fail
        (its sessions cannot be served any more, and a session manager runs only once), the
        viewer's endpoints are forgotten, so the next request makes them again."""
        if self._tasks is None:
            raise RuntimeError("EndpointRegistry.run_in must be called before serving")
        managers = self._managers.setdefault(viewer, SessionManagers())
        scope = anyio.CancelScope()
        managers.scopes.append(scope)
        managers.started += 1

        async def run(*, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
            with scope:
                try:
                    async with server.session_manager.run():
                        managers.running += 1
                        task_status.started()
                        try:
                            await anyio.sleep_forever()
                        finally:
                            managers.running -= 1
                except Exception:
                    self._forget(viewer, managers)
                    raise  # contained (and logged) by the supervisor

        await self._tasks.start(run, name=f"session manager of {viewer.describe()}")

    def _forget(self, viewer: Viewer, managers: SessionManagers) -> None:
        if self._managers.get(viewer) is not managers:
            return
        log.error("a session manager of %s failed; its endpoints are made again", viewer.describe())
        del self._managers[viewer]
        self._endpoints.pop(viewer, None)
        self.remade += 1
        for scope in managers.scopes:
            scope.cancel()


def _http_app(
    server: MCPServer, *, answer_early: Callable[[object, Scope], Response | None] | None = None
) -> ASGIApp:
    """Streamable HTTP at /mcp and SSE at /sse (messages to /messages/) for one server, a
    message that is not JSON-RPC answered in one line before the SDK sees it, and one that
    `answer_early` answers (a call refused as busy) answered by it."""
    streamable = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        # Each answer one JSON body, not an event stream opened for it: 14-21% less of the
        # server's processor per call and 9-18% less of the client's, measured under load
        # (BENCHMARKS.md). No tool reports progress or asks the client anything while it
        # runs; what a client is told beside an answer (a call cancelled at the deadline)
        # goes on its session's own stream (server/client_logging.py).
        json_response=True,
        transport_security=NO_SDK_HOST_CHECK,
        # Named, not left to the SDK's default: SessionCaps frees a slot by the same rule.
        session_idle_timeout=SESSION_IDLE_S,
    )
    sse = server.sse_app(
        sse_path=SSE_PATH, message_path=MESSAGE_PATH, transport_security=NO_SDK_HOST_CHECK
    )
    return EnvelopeCheck(
        Starlette(routes=[*streamable.routes, *sse.routes]), answer_early=answer_early
    )
