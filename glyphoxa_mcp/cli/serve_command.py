"""`serve`: the memory over MCP, on stdio, SSE or HTTP."""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from typing import Literal

from anyio import create_task_group
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from glyphoxa_mcp.app import App, open_app
from glyphoxa_mcp.cli.dm_support import say_chosen
from glyphoxa_mcp.cli.http_options import (
    add_http_options,
    allowed_hosts,
    allowed_origins,
    check_auth,
)
from glyphoxa_mcp.cli.options import (
    add_database_options,
    add_embedder_options,
    add_llm_options,
    add_scope_options,
    add_write_options,
    app_settings,
    env_option,
    settings_of,
    uses_settings,
)
from glyphoxa_mcp.cli.settings import DEFAULT_SERVE_PORT
from glyphoxa_mcp.cli.signals import interruptible_stdin, stopping_on_signal
from glyphoxa_mcp.config import settings_from
from glyphoxa_mcp.db.change_feed import listening
from glyphoxa_mcp.desk.campaign_desk import CampaignDesk, only_campaign
from glyphoxa_mcp.desk.name_actions import check_npc
from glyphoxa_mcp.domain.tiers import DEFAULT_DEADLINES_MS, Tier, TierPolicy, tier_policy
from glyphoxa_mcp.domain.tool_names import NameStyle
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.domain.vocabulary import KEY_PATTERN
from glyphoxa_mcp.errors import ConfigurationError
from glyphoxa_mcp.server.http_limits import (
    DEFAULT_BODY_TIMEOUT_S,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_MAX_SESSIONS_PER_TOKEN,
    HttpTimeouts,
)
from glyphoxa_mcp.supervision import DEFAULT_UNHEALTHY_EXIT_S, UNHEALTHY_EXIT_CODE, Supervisor

log = logging.getLogger(__name__)
DEFAULT_PORT = DEFAULT_SERVE_PORT


class ServeSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    transport: Literal["stdio", "sse", "http"] = "stdio"
    tier: Tier = Tier.STANDARD
    campaign: str | None = Field(default=None, pattern=KEY_PATTERN)
    npc: str | None = Field(default=None, pattern=KEY_PATTERN)
    tool_names: NameStyle = NameStyle.DOTTED
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    auth: Literal["token", "none"] = "token"
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    metrics_token: str | None = Field(default=None, min_length=16, max_length=200, repr=False)
    fast_deadline_ms: int = Field(default=DEFAULT_DEADLINES_MS[Tier.FAST], gt=0)
    standard_deadline_ms: int = Field(default=DEFAULT_DEADLINES_MS[Tier.STANDARD], gt=0)
    deep_deadline_ms: int = Field(default=DEFAULT_DEADLINES_MS[Tier.DEEP], gt=0)
    max_sessions_per_token: int = Field(default=DEFAULT_MAX_SESSIONS_PER_TOKEN, ge=1)
    header_timeout_s: float = Field(default=DEFAULT_HEADER_TIMEOUT_S, gt=0)
    body_timeout_s: float = Field(default=DEFAULT_BODY_TIMEOUT_S, gt=0)
    # 0: never exit on the server's own account.
    unhealthy_exit_s: float = Field(default=DEFAULT_UNHEALTHY_EXIT_S, ge=0)

    def timeouts(self) -> HttpTimeouts:
        return HttpTimeouts(self.header_timeout_s, self.body_timeout_s)

    def deadline_ms(self, tier: Tier) -> int:
        return int(getattr(self, f"{tier.value.lower()}_deadline_ms"))

    def policies(self) -> dict[Tier, TierPolicy]:
        return {tier: tier_policy(tier, self.deadline_ms(tier)) for tier in Tier}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the memory over MCP",
        description="Serve the memory tools over stdio (default: one campaign, one viewer), or "
        "over HTTP (streamable HTTP and SSE): every campaign's NPCs and DM at "
        "/c/{campaign}/npc/{npc_id}/{tier}/mcp and /c/{campaign}/dm/{tier}/mcp (or /sse), "
        "each request with a bearer token (`glyphoxa-mcp token create`), plus /healthz and "
        "/metrics (Prometheus; with token auth, scrapers send the bearer token set in "
        "GLYPHOXA_METRICS_TOKEN, 16 characters or more). With --campaign, HTTP serves that "
        "campaign's one viewer, also at /{tier}/mcp and /mcp.",
    )
    env_option(serve, "--transport", env="GLYPHOXA_TRANSPORT", help="stdio, sse or http")
    add_scope_options(
        serve,
        default_campaign=None,
        campaign_help="serve this campaign only; unset, stdio serves the only campaign there "
        "is (with several, name one) and HTTP every campaign",
    )
    env_option(
        serve,
        "--tool-names",
        env="GLYPHOXA_TOOL_NAMES",
        help="dotted (memory.search_sessions) or underscore (memory_search_sessions, for "
        "Claude Desktop and the OpenAI and Anthropic APIs)",
    )
    http = serve.add_argument_group("HTTP (--transport http or sse)")
    add_http_options(
        http,
        host_env="GLYPHOXA_HOST",
        port_env="GLYPHOXA_PORT",
        auth_help="token: every request needs a bearer token; none: the path alone decides, "
        "allowed only when --host is loopback",
    )
    env_option(
        http,
        "--max-sessions-per-token",
        env="GLYPHOXA_MAX_SESSIONS_PER_TOKEN",
        help="streamable HTTP sessions and SSE streams one token may hold open at once; past "
        "it a new one gets 429 until one closes (without auth: per viewer)",
        metavar="N",
    )
    env_option(
        http,
        "--unhealthy-exit-s",
        env="GLYPHOXA_UNHEALTHY_EXIT_S",
        help=f"exit with code {UNHEALTHY_EXIT_CODE} once the server could not serve calls this "
        "long for a reason of its own (a background task failing again and again, a session "
        "manager stopped; a database outage does not count), so a supervisor starts it again; "
        "0: never",
        metavar="S",
    )
    for tier in Tier:
        name = tier.value.lower()
        env_option(
            serve,
            f"--{name}-deadline-ms",
            env=f"GLYPHOXA_{tier.value}_DEADLINE_MS",
            help=f"cancel {tier.value} calls running longer",
            metavar="MS",
        )
    uses_settings(http, "GLYPHOXA_METRICS_TOKEN")
    add_write_options(serve)
    add_database_options(serve)
    add_embedder_options(serve)
    # The recorder endpoint extracts scenes during play with the LLM, when one is set.
    add_llm_options(serve)
    serve.set_defaults(run=run_serve)


def serve_settings(args: argparse.Namespace) -> ServeSettings:
    settings = settings_from(
        ServeSettings,
        {
            "transport": args.transport,
            "tier": args.tier,
            "campaign": args.campaign or None,
            "npc": args.npc or None,
            "tool_names": args.tool_names,
            "host": args.host,
            "port": args.port,
            "auth": args.auth,
            "allowed_hosts": allowed_hosts(args),
            "allowed_origins": allowed_origins(args),
            "metrics_token": _secret(settings_of(args).serving.metrics_token),
            "max_sessions_per_token": args.max_sessions_per_token,
            "header_timeout_s": args.header_timeout_s,
            "body_timeout_s": args.body_timeout_s,
            "unhealthy_exit_s": args.unhealthy_exit_s,
            **{
                f"{t.value.lower()}_deadline_ms": getattr(args, f"{t.value.lower()}_deadline_ms")
                for t in Tier
            },
        },
    )
    if settings.transport != "stdio":
        check_auth(settings.auth, settings.host, "every viewer's memory")
    if settings.npc is not None and settings.campaign is None:
        raise ConfigurationError("--npc needs --campaign: name the campaign the NPC belongs to.")
    return settings


async def run_serve(args: argparse.Namespace) -> int:
    settings = serve_settings(args)
    if settings.transport == "stdio":
        async with open_app(app_settings(args)) as app:
            await app.warm_up()
            await _serve_stdio(app, settings)
        return 0
    from glyphoxa_mcp.server.hosting import listening_socket

    # Before the database and the embedder start: a port in use is known in a moment.
    with listening_socket(settings.host, settings.port) as sock:
        async with open_app(app_settings(args)) as app:
            await app.warm_up()
            await _serve_http(app, settings, sock, args.log_level)
    return 0


async def _single_viewer(app: App, settings: ServeSettings) -> Viewer:
    """The one viewer stdio (or HTTP with --campaign) serves: --campaign's, or without it
    the only campaign there is (said on stderr), as its DM or --npc."""
    campaign = settings.campaign
    if campaign is None:
        campaign = await only_campaign(app.db)
        say_chosen(campaign)
    desk = await CampaignDesk.of(app, campaign)
    if settings.npc is None:
        return Viewer.dm(desk.campaign_id)
    await check_npc(desk, settings.npc)
    return Viewer.npc(desk.campaign_id, settings.npc)


async def _serve_stdio(app: App, settings: ServeSettings) -> None:
    # The MCP SDK takes about a second to import; only serving needs it, so the DM's
    # commands don't pay for it.
    from glyphoxa_mcp.server.in_flight import GracefulStop, InFlight
    from glyphoxa_mcp.server.memory_server import build_server
    from glyphoxa_mcp.server.state import ServerState
    from glyphoxa_mcp.server.subscriptions import HotSubscriptions

    viewer = await _single_viewer(app, settings)
    view = await app.view(viewer.campaign, viewer.npc_id)
    await view.warm_up()
    state = ServerState(view, tier_policy(settings.tier, settings.deadline_ms(settings.tier)))
    subscriptions = HotSubscriptions(
        view.memory, viewer.npc_id, on_removal=view.forget_last_hot_contexts
    )
    in_flight = InFlight()
    server = build_server(
        state, settings.tool_names, subscriptions=subscriptions, in_flight=in_flight
    )
    log.info("serving %s over stdio", viewer.describe())
    # What a background task raises is contained (and logged once), never ending the server.
    supervisor = Supervisor()
    async with (
        app.db.guard.running(supervisor),
        listening(
            app.db.location.dsn,
            subscriptions.on_change,
            on_resync=subscriptions.resync,
            supervisor=supervisor,
        ) as feed,
    ):
        forget = app.db.guard.on_recovered(feed.nudge)
        try:
            with interruptible_stdin() as end_input:
                stop = GracefulStop(end_input, in_flight)
                with stopping_on_signal(stop.request):
                    async with create_task_group() as tasks:
                        tasks.start_soon(stop.when_requested)
                        await server.run_stdio_async()
                        tasks.cancel_scope.cancel()
        finally:
            forget()


async def _serve_http(
    app: App, settings: ServeSettings, sock: socket.socket, log_level: str
) -> None:
    from glyphoxa_mcp.server.endpoints import EndpointRegistry, EndpointSettings
    from glyphoxa_mcp.server.hosting import build_http_app, serve_http
    from glyphoxa_mcp.server.http_guard import HostRules
    from glyphoxa_mcp.server.metrics import Metrics
    from glyphoxa_mcp.server.token_gate import TokenGate

    single = await _single_viewer(app, settings) if settings.campaign is not None else None
    registry = EndpointRegistry(
        app,
        EndpointSettings(settings.policies(), settings.tool_names, metrics=Metrics()),
        only=single,
    )
    http_app = build_http_app(
        app.db,
        registry,
        TokenGate(app.access_tokens() if settings.auth == "token" else None),
        HostRules(settings.allowed_hosts, settings.allowed_origins),
        single=single,
        default_tier=settings.tier,
        metrics_token=settings.metrics_token,
        max_sessions_per_token=settings.max_sessions_per_token,
        unhealthy_exit_s=settings.unhealthy_exit_s or None,
    )
    base = f"http://{_url_host(settings.host)}:{settings.port}"
    if single is None:
        where = (
            f"every campaign at {base}/c/{{campaign}}/npc/{{npc_id}}/{{tier}}/mcp "
            "and /c/{campaign}/dm/{tier}/mcp"
        )
    else:
        where = f"{single.describe()} at {base}/mcp ({settings.tier.value}) and /{{tier}}/mcp"
    auth = (
        "bearer tokens required (glyphoxa-mcp token create)"
        if settings.auth == "token"
        else "no auth (loopback only)"
    )
    print(
        f"glyphoxa-mcp: serving {where}; {auth}; health at {base}/healthz, metrics at "
        f"{base}/metrics",
        file=sys.stderr,
    )
    await serve_http(http_app, sock, log_level, settings.timeouts())


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
