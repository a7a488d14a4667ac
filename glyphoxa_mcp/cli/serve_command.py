"""`serve`: the memory over MCP, on stdio, SSE or HTTP."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.access import Viewer, is_loopback
from glyphoxa_mcp.cli.dm_support import check_npc
from glyphoxa_mcp.cli.options import (
    add_database_options,
    add_scope_options,
    database_settings,
    env_option,
)
from glyphoxa_mcp.config import settings_from
from glyphoxa_mcp.db.change_feed import listening
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import ConfigurationError
from glyphoxa_mcp.providers.chat import DEFAULT_CHAT_MODEL, ChatSettings
from glyphoxa_mcp.providers.embeddings import Embedder, EmbeddingSettings, make_embedder
from glyphoxa_mcp.server.tiers import DEFAULT_DEADLINES_MS, Tier, TierPolicy, tier_policy
from glyphoxa_mcp.server.tool_names import NameStyle
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.vocabulary import KEY_PATTERN

log = logging.getLogger(__name__)
DEFAULT_PORT = 8765
# stdio serves one campaign; without --campaign, the one `demo` and `ingest` default to.
DEFAULT_CAMPAIGN = "default"


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
    fast_deadline_ms: int = Field(default=DEFAULT_DEADLINES_MS[Tier.FAST], gt=0)
    standard_deadline_ms: int = Field(default=DEFAULT_DEADLINES_MS[Tier.STANDARD], gt=0)
    deep_deadline_ms: int = Field(default=DEFAULT_DEADLINES_MS[Tier.DEEP], gt=0)

    def deadline_ms(self, tier: Tier) -> int:
        return int(getattr(self, f"{tier.value.lower()}_deadline_ms"))

    def policies(self) -> dict[Tier, TierPolicy]:
        return {tier: tier_policy(tier, self.deadline_ms(tier)) for tier in Tier}


def add_embedder_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("embeddings")
    env_option(
        group,
        "--embedder",
        env="GLYPHOXA_EMBEDDER",
        help="local or openai; unset: openai when a key or base URL is set, else local",
        metavar="NAME",
    )
    env_option(
        group,
        "--embedding-model",
        env="GLYPHOXA_EMBEDDING_MODEL",
        help="model of an OpenAI-compatible embedder (default text-embedding-3-small)",
        metavar="MODEL",
    )
    env_option(
        group,
        "--openai-base-url",
        env="GLYPHOXA_OPENAI_BASE_URL",
        help="an OpenAI-compatible server such as Ollama (http://localhost:11434/v1); "
        "the API key is read from GLYPHOXA_OPENAI_API_KEY or OPENAI_API_KEY",
        metavar="URL",
    )


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("LLM (used when an API key or base URL is set)")
    env_option(
        group,
        "--llm-model",
        env="GLYPHOXA_LLM_MODEL",
        help="chat model for name correction, extraction and summaries",
        default=DEFAULT_CHAT_MODEL,
        metavar="MODEL",
    )
    group.add_argument(
        "--no-llm",
        action="store_true",
        default=os.environ.get("GLYPHOXA_LLM", "").lower() in {"off", "0", "false", "no"},
        help="stay offline even with a key or base URL [env GLYPHOXA_LLM=off]",
    )


def chat_settings(args: argparse.Namespace) -> ChatSettings:
    return settings_from(
        ChatSettings,
        {
            "model": args.llm_model,
            "base_url": args.openai_base_url or os.environ.get("OPENAI_BASE_URL"),
            "api_key": os.environ.get("GLYPHOXA_OPENAI_API_KEY")
            or os.environ.get("OPENAI_API_KEY"),
            "enabled": not args.no_llm,
        },
    )


def embedding_settings(args: argparse.Namespace) -> EmbeddingSettings:
    return settings_from(
        EmbeddingSettings,
        {
            "provider": args.embedder,
            "model": args.embedding_model,
            "base_url": args.openai_base_url or os.environ.get("OPENAI_BASE_URL"),
            "api_key": os.environ.get("GLYPHOXA_OPENAI_API_KEY")
            or os.environ.get("OPENAI_API_KEY"),
        },
    )


def _listed(values: list[str] | None, env: str) -> tuple[str, ...]:
    """Repeated flags, else the comma-separated environment variable."""
    if values:
        return tuple(values)
    return tuple(v.strip() for v in os.environ.get(env, "").split(",") if v.strip())


def register(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the memory over MCP",
        description="Serve the memory tools over stdio (default: one campaign, one viewer), or "
        "over HTTP (streamable HTTP and SSE): every campaign's NPCs and DM at "
        "/c/{campaign}/npc/{npc_id}/{tier}/mcp and /c/{campaign}/dm/{tier}/mcp (or /sse), "
        "each request with a bearer token (`glyphoxa-mcp token create`), plus /healthz. With "
        "--campaign, HTTP serves that campaign's one viewer, also at /{tier}/mcp and /mcp.",
    )
    env_option(
        serve, "--transport", env="GLYPHOXA_TRANSPORT", help="stdio, sse or http", default="stdio"
    )
    add_scope_options(serve, default_campaign=None)
    env_option(
        serve,
        "--tool-names",
        env="GLYPHOXA_TOOL_NAMES",
        help="dotted (memory.search_sessions) or underscore (memory_search_sessions, for "
        "Claude Desktop and the OpenAI and Anthropic APIs)",
        default="dotted",
    )
    http = serve.add_argument_group("HTTP (--transport http or sse)")
    env_option(
        http, "--host", env="GLYPHOXA_HOST", help="address to listen on", default="127.0.0.1"
    )
    env_option(http, "--port", env="GLYPHOXA_PORT", help="port", default=DEFAULT_PORT)
    env_option(
        http,
        "--auth",
        env="GLYPHOXA_AUTH",
        help="token: every request needs a bearer token; none: the path alone decides, "
        "allowed only when --host is loopback",
        default="token",
    )
    http.add_argument(
        "--allowed-host",
        action="append",
        metavar="NAME[:PORT]",
        help="a Host header to answer besides the loopback names (repeat for more) "
        "[env GLYPHOXA_ALLOWED_HOSTS, comma-separated]",
    )
    http.add_argument(
        "--allowed-origin",
        action="append",
        metavar="URL",
        help="a browser Origin to accept besides loopback pages, e.g. https://vtt.example "
        "(repeat for more) [env GLYPHOXA_ALLOWED_ORIGINS, comma-separated]",
    )
    for tier in Tier:
        name = tier.value.lower()
        env_option(
            serve,
            f"--{name}-deadline-ms",
            env=f"GLYPHOXA_{tier.value}_DEADLINE_MS",
            help=f"cancel {tier.value} calls running longer",
            default=DEFAULT_DEADLINES_MS[tier],
            metavar="MS",
        )
    add_database_options(serve)
    add_embedder_options(serve)
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
            "allowed_hosts": _listed(args.allowed_host, "GLYPHOXA_ALLOWED_HOSTS"),
            "allowed_origins": _listed(args.allowed_origin, "GLYPHOXA_ALLOWED_ORIGINS"),
            **{
                f"{t.value.lower()}_deadline_ms": getattr(args, f"{t.value.lower()}_deadline_ms")
                for t in Tier
            },
        },
    )
    if settings.transport != "stdio" and settings.auth == "none" and not is_loopback(settings.host):
        raise ConfigurationError(
            f"--auth none serves every viewer's memory to anyone who can reach "
            f"{settings.host}; use it only with a loopback --host (127.0.0.1, ::1, localhost), "
            "or keep --auth token."
        )
    if settings.npc is not None and settings.campaign is None:
        raise ConfigurationError("--npc needs --campaign: name the campaign the NPC belongs to.")
    return settings


async def run_serve(args: argparse.Namespace) -> int:
    settings = serve_settings(args)
    embedder_settings = embedding_settings(args)
    async with await Database.open(database_settings(args)) as db:
        embedder = make_embedder(embedder_settings, db.embedding_dim)
        if embedder_settings.resolved_provider == "local":
            # The offline model loads at its first use (seconds on a busy machine): now,
            # not in the first search, which the tier's deadline would cancel.
            await embedder.embed(["warm up"])
        if settings.transport == "stdio":
            await _serve_stdio(db, embedder, settings)
        else:
            await _serve_http(db, embedder, settings, args.log_level)
    return 0


async def _single_viewer(db: Database, settings: ServeSettings) -> Viewer:
    campaign = settings.campaign or DEFAULT_CAMPAIGN
    await Campaigns(db).get(campaign)
    if settings.npc is None:
        return Viewer.dm(campaign)
    await check_npc(CampaignMemory(db, campaign), settings.npc)
    return Viewer.npc(campaign, settings.npc)


async def _serve_stdio(db: Database, embedder: Embedder, settings: ServeSettings) -> None:
    # The MCP SDK takes about a second to import; only serving needs it, so the DM's
    # commands don't pay for it.
    from glyphoxa_mcp.server.app import build_server
    from glyphoxa_mcp.server.state import ServerState
    from glyphoxa_mcp.server.subscriptions import HotSubscriptions
    from glyphoxa_mcp.views.view import View

    viewer = await _single_viewer(db, settings)
    memory = CampaignMemory(db, viewer.campaign)
    view = await View.open(memory, viewer.npc_id, embedder)
    await view.warm_up()
    state = ServerState(view, tier_policy(settings.tier, settings.deadline_ms(settings.tier)))
    subscriptions = HotSubscriptions(memory, viewer.npc_id)
    server = build_server(state, settings.tool_names, subscriptions=subscriptions)
    log.info("serving %s over stdio", viewer.describe())
    async with listening(db.location.dsn, subscriptions.on_change):
        await server.run_stdio_async()


async def _serve_http(
    db: Database, embedder: Embedder, settings: ServeSettings, log_level: str
) -> None:
    from glyphoxa_mcp.server.endpoints import EndpointRegistry, EndpointSettings
    from glyphoxa_mcp.server.hosting import build_http_app, serve_http
    from glyphoxa_mcp.server.http_guard import HostRules
    from glyphoxa_mcp.server.token_gate import TokenGate

    single = await _single_viewer(db, settings) if settings.campaign is not None else None
    registry = EndpointRegistry(
        db,
        embedder,
        EndpointSettings(settings.policies(), settings.tool_names),
        serves=(lambda viewer: viewer == single) if single is not None else lambda _v: True,
    )
    app = build_http_app(
        db,
        registry,
        TokenGate(AccessTokens(db) if settings.auth == "token" else None),
        HostRules(settings.allowed_hosts, settings.allowed_origins),
        single=single,
        default_tier=settings.tier,
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
    print(f"glyphoxa-mcp: serving {where}; {auth}; health at {base}/healthz", file=sys.stderr)
    await serve_http(app, settings.host, settings.port, log_level)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
