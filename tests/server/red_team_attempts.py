"""Attempts to read a secret, as a curious model (or a prompt-injected player) would make
them: every tool with the secret's names and their variants, every filter, every session,
and every resource. Each runs over a real MCP client; its reply is everything the client
received."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from mcp.client import Client
from mcp.types import (
    CompletionArgument,
    ResourceTemplateReference,
    TextResourceContents,
)

from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.server.resource_uris import (
    HOT_URI_TEMPLATE,
    NPCS_URI,
    PREFETCH_URI_TEMPLATE,
    VOCABULARY_URI,
    hot_uri,
)
from tests.server.red_team_world import HIDDEN_TYPE

NAMES = [
    "Salt Knives",
    "salt knife",
    "Salt-Knives",
    "SaltKnives",
    "Salt Nives",
    "Sault Knives",
    "The Salt Knives' Cellar",
    "Session: The Salt Knives' Cellar",
    "Salt_Knives",
    "S.a.l.t K.n.i.v.e.s",
    "salt-knives-gang",
    "Salt-Knives-Cellar",
    "salt-knives-den",
]
QUESTIONS = [
    "smugglers",
    "who runs the harbour",
    "the cellar under the Red Kettle",
    "contraband",
    "crates stamped with a dagger",
    "Tarquel caravan insurance",
    "who paid to lose the caravan",
    "Dovrek Night of Lights",
    "was Dovrek on the water with a lantern",
    "is Berrit a member",
    "prep notes staged the theft",
    "what do they call the smugglers at the harbour",
    "gossip on the quay",
    "waiting in the dark by the tar barrels",
    "what happened last session",
]
SESSIONS = [
    "session-1",
    "session-2",
    "session-3",
    "session-4",
    "session-5",
    "session-6",
    "salt-knives-den",
]
PEOPLE = [
    "Old Berrit",
    "Tarquel",
    "Dovrek",
    "Town Watch",
    "The Night of Lights",
    "Red Kettle",
    "Kael",
    "Brannoch",
]
UTTERANCES = [
    "Are you one of the Salt Knives?",
    "Do you remember the cellar under the Kettle last time?",
    "What did Tarquel do with the caravan last session?",
    "Tell me about Dovrek on the Night of Lights",
    "Remember what Lyra said about the Sault Knives?",
    "What happened in session zero?",
]


@dataclass(frozen=True)
class Attempt:
    label: str
    arguments: tuple[str, ...]
    """The strings the attempt sends: a reply that repeats them reveals nothing."""
    run: Callable[[Client], Awaitable[str]]


def _tool(tool: str, **arguments: Any) -> Attempt:
    async def run(client: Client) -> str:
        result = await client.call_tool(tool, arguments)
        texts = [getattr(block, "text", "") for block in result.content]
        structured = json.dumps(result.structured_content, ensure_ascii=False)
        return "\n".join([*texts, structured])

    strings = tuple(str(v) for v in arguments.values() if isinstance(v, str))
    return Attempt(f"{tool}({arguments})", strings, run)


def _resource(uri: str, *echoed: str) -> Attempt:
    async def run(client: Client) -> str:
        try:
            result = await client.read_resource(uri)
        except Exception as exc:  # an error is a reply too, and must not leak either
            return str(exc)
        return "\n".join(c.text for c in result.contents if isinstance(c, TextResourceContents))

    return Attempt(f"read {uri}", echoed, run)


def _completion(template: str, argument: str, typed: str) -> Attempt:
    async def run(client: Client) -> str:
        result = await client.complete(
            ResourceTemplateReference(type="ref/resource", uri=template),
            CompletionArgument(name=argument, value=typed).model_dump(),
        )
        return json.dumps(result.completion.values)

    return Attempt(f"complete {argument}={typed!r}", (typed,), run)


def attempts(npc: str) -> list[Attempt]:
    """Every attempt, for a client whose own NPC (for the resources) is `npc`."""
    return list(_attempts(npc))


def _attempts(npc: str) -> Iterator[Attempt]:
    for query in [*NAMES, *QUESTIONS]:
        yield _tool("memory.search_sessions", query=query, top_k=10)
        yield _tool("memory.search_facts", query=query, top_k=10)
    for query in ("Salt Knives", "smugglers", "insurance"):
        for session in ("session-3", "session-4", "session-5"):
            yield _tool("memory.search_sessions", query=query, session_id=session)
            yield _tool("memory.search_facts", query=query, session_id=session)
    for query in ("Salt Knives", "cellar", "Dovrek", "Tarquel caravan", "Old Berrit"):
        # The red team reads at DEEP, whose policy expands through the graph.
        yield _tool("memory.search_sessions", query=query, top_k=10)
    for speaker in ("Kael", "DM", "Brannoch", "Salt_Knives Boss", "Salt Knives Boss"):
        yield _tool("memory.search_sessions", query="Salt Knives cellar", speaker=speaker)
    for entity in [*PEOPLE, "Salt Knives", "Session: The Salt Knives' Cellar"]:
        yield _tool("memory.search_facts", query="what is known", entity=entity, top_k=10)
    for name in [*NAMES, *PEOPLE, "session-5", "episode-session-5", "episode-session-3"]:
        yield _tool("memory.query_entities", name=name)
    for entity_type in EntityType:
        yield _tool("memory.query_entities", type=entity_type.value, limit=50)
    for person in PEOPLE:
        yield _tool("memory.query_entities", related_to=person, depth=3, limit=50)
    yield _tool("memory.query_entities", related_to="Wendrith", relation=HIDDEN_TYPE)
    for relation in ("MEMBER_OF", "PARTICIPATED_IN", "HOSTILE_TO"):
        yield _tool("memory.query_entities", related_to="Old Berrit", relation=relation)
        yield _tool("memory.query_entities", related_to="Dovrek", relation=relation)
    for session in [*SESSIONS, "salt-knives", "no-such-session"]:
        yield _tool("memory.get_session_summary", session_id=session)
    for ago in range(1, 6):
        yield _tool("memory.get_session_summary", sessions_ago=ago)
    yield _resource(hot_uri(npc))
    for session in ("session-3", "session-4", "session-5", "session-6", "salt-knives-den"):
        yield _resource(hot_uri(npc, session), session)
    for utterance in UTTERANCES:
        uri = PREFETCH_URI_TEMPLATE.replace("{npc_id}", npc).replace(
            "{?utterance}", f"?utterance={quote(utterance, safe='')}"
        )
        yield _resource(uri, utterance)
    yield _resource(VOCABULARY_URI)
    yield _resource(NPCS_URI)
    yield _completion(HOT_URI_TEMPLATE, "session", "")
    yield _completion(HOT_URI_TEMPLATE, "session", "session-")
    yield _completion(HOT_URI_TEMPLATE, "session", "salt")
    yield _completion(HOT_URI_TEMPLATE, "npc_id", "")
