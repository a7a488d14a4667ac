"""`serve`: the memory over MCP, on stdio, SSE or HTTP."""

from __future__ import annotations

import argparse
import logging
import os
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from glyphoxa_mcp.cli.options import (
    add_database_options,
    add_scope_options,
    database_settings,
    env_option,
)
from glyphoxa_mcp.config import settings_from
from glyphoxa_mcp.db.change_feed import listening
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.providers.chat import DEFAULT_CHAT_MODEL, ChatSettings
from glyphoxa_mcp.providers.embeddings import EmbeddingSettings, make_embedder
from glyphoxa_mcp.recall.names import match_names
from glyphoxa_mcp.server.tiers import DEFAULT_DEADLINES_MS, Tier, tier_policy
from glyphoxa_mcp.server.tool_names import NameStyle
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.vocabulary import KEY_PATTERN

log = logging.getLogger(__name__)
DEFAULT_PORT = 8765


class ServeSettings(BaseModel):
    model_config = ConfigDict(frozen=True)

    transport: Literal["stdio", "sse", "http"] = "stdio"
    tier: Tier = Tier.STANDARD
    campaign: str = Field(default="default", pattern=KEY_PATTERN)
    npc: str | None = Field(default=None, pattern=KEY_PATTERN)
    tool_names: NameStyle = NameStyle.DOTTED
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=1, le=65535)
    fast_deadline_ms: int = Field(default=DEFAULT_DEADLINES_MS[Tier.FAST], gt=0)
    standard_deadline_ms: int = Field(default=DEFAULT_DEADLINES_MS[Tier.STANDARD], gt=0)
    deep_deadline_ms: int = Field(default=DEFAULT_DEADLINES_MS[Tier.DEEP], gt=0)

    def deadline_ms(self, tier: Tier) -> int:
        return getattr(self, f"{tier.value.lower()}_deadline_ms")


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


def register(commands: argparse._SubParsersAction) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the campaign's memory over MCP",
        description="Serve the four memory tools over stdio (default), SSE, or HTTP (streamable "
        "HTTP and SSE for every tier at /<tier>/mcp and /<tier>/sse, plus /healthz).",
    )
    env_option(
        serve, "--transport", env="GLYPHOXA_TRANSPORT", help="stdio, sse or http", default="stdio"
    )
    add_scope_options(serve, default_campaign="default")
    env_option(
        serve,
        "--tool-names",
        env="GLYPHOXA_TOOL_NAMES",
        help="dotted (memory.search_sessions) or underscore (memory_search_sessions, for "
        "Claude Desktop and the OpenAI and Anthropic APIs)",
        default="dotted",
    )
    env_option(serve, "--host", env="GLYPHOXA_HOST", help="HTTP address", default="127.0.0.1")
    env_option(serve, "--port", env="GLYPHOXA_PORT", help="HTTP port", default=DEFAULT_PORT)
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
    return settings_from(
        ServeSettings,
        {
            "transport": args.transport,
            "tier": args.tier,
            "campaign": args.campaign,
            "npc": args.npc or None,
            "tool_names": args.tool_names,
            "host": args.host,
            "port": args.port,
            **{
                f"{t.value.lower()}_deadline_ms": getattr(args, f"{t.value.lower()}_deadline_ms")
                for t in Tier
            },
        },
    )


async def check_npc(memory: CampaignMemory, npc_id: str) -> None:
    try:
        await memory.graph.get_entity(npc_id)
    except NotFoundError:
        near = match_names(npc_id, await memory.queries.entity_names(), limit=3)
        hint = f" Did you mean {', '.join(m.entity.id for m in near)}?" if near else ""
        raise NotFoundError(
            f"No entity {npc_id!r} in campaign {memory.campaign_id!r} for --npc.{hint}"
        ) from None


async def run_serve(args: argparse.Namespace) -> int:
    # The MCP SDK takes about a second to import; only serving needs it, so the DM's
    # commands don't pay for it.
    from glyphoxa_mcp.server.app import build_server
    from glyphoxa_mcp.server.hosting import build_http_app, build_sse_app, serve_http
    from glyphoxa_mcp.server.state import ServerState
    from glyphoxa_mcp.server.subscriptions import HotSubscriptions

    settings = serve_settings(args)
    embedder_settings = embedding_settings(args)
    async with await Database.open(database_settings(args)) as db:
        await Campaigns(db).get(settings.campaign)
        memory = CampaignMemory(db, settings.campaign)
        if settings.npc is not None:
            await check_npc(memory, settings.npc)
        embedder = make_embedder(embedder_settings, db.embedding_dim)
        subscriptions = HotSubscriptions(memory, settings.npc)
        states = {
            tier: ServerState(
                memory=memory,
                npc_id=settings.npc,
                policy=tier_policy(tier, settings.deadline_ms(tier)),
                embedder=embedder,
            )
            for tier in Tier
        }
        # The tiers share the memory and the scope: one warm-up serves them all.
        await states[settings.tier].warm_up()
        if embedder_settings.resolved_provider == "local":
            # The offline model loads at its first use (seconds on a busy machine): now,
            # not in the first search, which the tier's deadline would cancel.
            await embedder.embed(["warm up"])
        servers = {
            tier: build_server(state, settings.tool_names, subscriptions=subscriptions)
            for tier, state in states.items()
        }
        chosen = servers[settings.tier]
        log.info(
            "serving campaign %s (%s scope) over %s",
            settings.campaign,
            settings.npc or "DM",
            settings.transport,
        )
        async with listening(db.location.dsn, subscriptions.on_change):
            if settings.transport == "stdio":
                await chosen.run_stdio_async()
            elif settings.transport == "sse":
                app = build_sse_app(chosen, db, host=settings.host)
                await serve_http(app, settings.host, settings.port, args.log_level)
            else:
                app = build_http_app(servers, settings.tier, db, host=settings.host)
                await serve_http(app, settings.host, settings.port, args.log_level)
    return 0
