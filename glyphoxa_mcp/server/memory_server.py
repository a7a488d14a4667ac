"""Building an MCP server for one tier, campaign and knowledge scope."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from mcp.server.mcpserver import MCPServer

from glyphoxa_mcp import __version__
from glyphoxa_mcp.domain.tool_names import NameStyle
from glyphoxa_mcp.recall.hot_budgets import HotBudgets
from glyphoxa_mcp.server.argument_gate import ArgumentGate
from glyphoxa_mcp.server.client_logging import ClientLogging
from glyphoxa_mcp.server.compact_text import compact_tool_text
from glyphoxa_mcp.server.completions import register_completions
from glyphoxa_mcp.server.in_flight import InFlight
from glyphoxa_mcp.server.metrics import Metrics
from glyphoxa_mcp.server.resources import register_resources
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.server.tier_gate import TierGate
from glyphoxa_mcp.server.tools import ARGUMENTS as TOOL_ARGUMENTS
from glyphoxa_mcp.server.tools import memory_tools

INSTRUCTIONS = (
    "Long-term memory of a tabletop RPG campaign. Use it to recall people, places, factions "
    "and past sessions before answering in character; results marked unconfirmed are rumours, "
    "and results marked secret are not common knowledge."
)


def build_server(
    state: ServerState,
    style: NameStyle = NameStyle.DOTTED,
    budgets: HotBudgets | None = None,
    subscriptions: HotSubscriptions | None = None,
    client_logging: ClientLogging | None = None,
    metrics: Metrics | None = None,
    in_flight: InFlight | None = None,
) -> MCPServer:
    """A server over `state`; the host owns the database pool and keeps it open (and its
    guard watching), and feeds database changes to `subscriptions` (shared by all servers of
    the process)."""
    subscriptions = subscriptions or HotSubscriptions(state.view.memory, state.view.npc_id)
    client_logging = client_logging or ClientLogging()

    @contextlib.asynccontextmanager
    async def lifespan(_server: MCPServer) -> AsyncIterator[ServerState]:
        yield state

    server = MCPServer(
        "glyphoxa-memory",
        title=f"Glyphoxa memory ({state.policy.tier.value})",
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan,
        middleware=[
            *([in_flight] if in_flight is not None else []),
            TierGate(
                state.policy,
                style,
                client_logging,
                guard=state.view.memory.db.guard,
                metrics=metrics,
                campaign=state.view.memory.campaign_id,
                admission=state.admission,
            ),
            ArgumentGate(TOOL_ARGUMENTS),
            compact_tool_text,
        ],
        subscriptions=subscriptions.bus,
        tools=memory_tools(),
    )
    subscriptions.attach(server)
    client_logging.attach(server)
    register_resources(server, state.view, budgets or HotBudgets(), state.policy.deadline_ms)
    register_completions(server, state.view)
    return server
