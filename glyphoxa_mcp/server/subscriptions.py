"""Telling subscribers that an NPC's hot context changed, on both protocol generations.

2026-07-28 clients open a `subscriptions/listen` stream; they hear from the subscription
bus. Handshake-era clients send `resources/subscribe`, which MCPServer does not handle by
itself, so this module registers that handler and keeps each subscribed connection.
Changes arrive from PostgreSQL (`db.change_feed`), so a transcript line written by another
process reaches subscribers too.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import anyio
from mcp import types
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourceUpdated
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from glyphoxa_mcp.db.change_feed import Change
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.domain.wording import counted
from glyphoxa_mcp.server.resource_uris import VOCABULARY_URI, answered, hot_uri, subscribable
from glyphoxa_mcp.server.sdk_hooks import add_request_handler, connection_of
from glyphoxa_mcp.storage.memory import CampaignMemory

log = logging.getLogger(__name__)
MAX_NPCS = 10_000
# Subscriptions one handshake-era connection may hold at once (each is kept until the client
# unsubscribes or its connection closes).
MAX_PER_CONNECTION = 200


class HotSubscriptions:
    """One per process and campaign, shared by every tier's server."""

    def __init__(
        self,
        memory: CampaignMemory,
        npc_id: str | None = None,
        max_per_connection: int = MAX_PER_CONNECTION,
        on_removal: Callable[[], None] | None = None,
    ) -> None:
        self.memory = memory
        self.npc_id = npc_id
        self.on_removal = on_removal
        self.max_per_connection = max_per_connection
        self.bus = InMemorySubscriptionBus()
        # uri -> {connection: a session of it to send with}, and connection -> uris.
        self._sessions: defaultdict[str, dict[Any, Any]] = defaultdict(dict)
        self._uris: defaultdict[Any, set[str]] = defaultdict(set)
        # Connections whose closing will release their subscriptions.
        self._watched: set[Any] = set()

    @property
    def held(self) -> int:
        """Subscriptions held by handshake-era clients now."""
        return sum(len(sessions) for sessions in self._sessions.values())

    def attach(self, server: MCPServer) -> None:
        add_request_handler(
            server, "resources/subscribe", types.SubscribeRequestParams, self._subscribe
        )
        add_request_handler(
            server, "resources/unsubscribe", types.UnsubscribeRequestParams, self._unsubscribe
        )

    async def _subscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        uri = str(params.uri)
        try:
            subscribable(uri)  # only this server's own resources
        except MCPError as exc:
            raise answered(exc, ctx.protocol_version, uri) from None
        own = hot_uri(self.npc_id) if self.npc_id is not None else None
        if own is not None and uri.startswith("glyphoxa://npc/") and uri.split("?")[0] != own:
            # The same answer whether or not that NPC exists, so nothing hidden is confirmed.
            raise MCPError(
                INVALID_PARAMS,
                f"uri refused: this server speaks for {self.npc_id!r}; subscribe to {own}.",
            )
        connection = connection_of(ctx.session)
        held = self._uris.get(connection, set())
        if uri not in held and len(held) >= self.max_per_connection:
            raise MCPError(
                INVALID_PARAMS,
                f"uri refused: this connection already holds "
                f"{counted(len(held), 'subscription')}, the most it may; unsubscribe from one "
                "first.",
            )
        if connection not in self._watched:
            self._release_when_closed(connection)
        self._sessions[uri].setdefault(connection, ctx.session)
        self._uris[connection].add(uri)
        return types.EmptyResult()

    def _release_when_closed(self, connection: Any) -> None:
        """Forget every subscription of `connection` when it closes (a DELETE, an idle
        timeout, a dropped SSE stream), not only when it unsubscribes: the SDK unwinds each
        connection's exit stack as it ends."""
        exit_stack = getattr(connection, "exit_stack", None)
        if exit_stack is not None:
            self._watched.add(connection)
            exit_stack.callback(self._forget_connection, connection)

    def _forget_connection(self, connection: Any) -> None:
        self._watched.discard(connection)
        for uri in list(self._uris.get(connection, ())):
            self._forget(uri, connection)

    async def _unsubscribe(
        self, ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        self._forget(str(params.uri), connection_of(ctx.session))
        return types.EmptyResult()

    def _forget(self, uri: str, connection: Any) -> None:
        sessions, uris = self._sessions.get(uri), self._uris.get(connection)
        if sessions is not None:
            sessions.pop(connection, None)
            if not sessions:
                del self._sessions[uri]
        if uris is not None:
            uris.discard(uri)
            if not uris:
                del self._uris[connection]

    async def on_change(self, change: Change) -> None:
        if change.campaign != self.memory.campaign_id:
            return
        if change.removed and self.on_removal is not None:
            self.on_removal()
        for uri in await self._affected(change):
            await self.resource_updated(uri)

    async def resync(self) -> None:
        """After the change feed was deaf (an outage), tell every subscriber to read again:
        what changed meanwhile was never announced."""
        await self.on_change(Change(campaign=self.memory.campaign_id, kind="graph"))

    async def resource_updated(self, uri: str) -> None:
        await self.bus.publish(ResourceUpdated(uri=uri))
        for connection, session in list(self._sessions.get(uri, {}).items()):
            try:
                await session.send_resource_updated(uri)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                self._forget(uri, connection)  # the client has gone

    async def _affected(self, change: Change) -> list[str]:
        """Every NPC's hot context: the talk and the graph feed all of them (subscribe to the
        plain URI, no ?session, to hear about every change), but a change of who was present
        only those it names; the vocabulary when the graph changes."""
        if change.npcs is not None:
            # Who was present changed: the NPCs named, and no one else, hear of it.
            named = set(change.npcs)
            if self.npc_id is None:
                npc_ids = sorted(named)
            else:
                npc_ids = [self.npc_id] if self.npc_id in named else []
        elif self.npc_id is not None:
            npc_ids = [(await self.memory.graph.get_entity(self.npc_id)).id]
        else:
            found = await self.memory.graph.find_entities(type=EntityType.NPC, limit=MAX_NPCS)
            npc_ids = [npc.id for npc in found]
        uris = {hot_uri(npc_id) for npc_id in npc_ids}
        if change.session is not None:
            uris |= {hot_uri(npc_id, change.session) for npc_id in npc_ids}
        # Handshake clients may hold session-specific URIs for other sessions.
        npc_prefixes = tuple(f"{hot_uri(npc_id)}?" for npc_id in npc_ids)
        uris |= {uri for uri in self._sessions if npc_prefixes and uri.startswith(npc_prefixes)}
        if change.kind == "graph":
            uris.add(VOCABULARY_URI)
        return sorted(uris)
