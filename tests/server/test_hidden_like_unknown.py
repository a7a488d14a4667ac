"""A hidden thing answers exactly like one that never existed: asked for by an NPC through any
tool, resource or completion, by any argument that names a speaker, NPC, entity or session,
a hidden value and an unknown value of the same shape get the same reply, byte for byte,
once the asked value is masked. Otherwise the difference itself tells the NPC the hidden
thing exists ("No speaker named 'salt-knives'." against "Nothing matched.", issue 27).

The world is the red team's (tests/server/red_team_world.py: Ysolde may not know the Salt
Knives; session-5 is the DM's) with a few more things hidden from Ysolde: an NPC only Old
Berrit knows, who speaks; a session whose id names the Salt Knives; a speaker heard only in
a DM-only session, and one heard only in DM-only lines of a session she may read.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import pytest
from asyncpg.connection import Connection
from mcp.client import Client
from mcp.shared.exceptions import MCPError
from mcp.types import ResourceTemplateReference

from glyphoxa_mcp.db.vector_connection import ITERATIVE_SCAN_SETTINGS, SELECT_PGVECTOR_VERSION
from glyphoxa_mcp.domain.models import NewEntity, NewEntry, NewSession, Visibility
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.pipeline.finish import end_session
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.resource_uris import HOT_URI_TEMPLATE, PREFETCH_URI_TEMPLATE
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.conftest import PostgresForTests, read_only, seeded_database, unhurried
from tests.server import red_team_world as world

# Every probe of every case, over a real MCP client: an exhaustive comparison.
pytestmark = pytest.mark.slow

VIEWER = "ysolde"
MASK = "<asked>"
START = datetime(2026, 4, 4, 19, tzinfo=UTC)
# Old Berrit's contact, whom Ysolde may not know; she speaks in a session Ysolde may read.
SABLE = NewEntity(
    id="sable",
    type=EntityType.NPC,
    name="Mother Sable",
    visibility=Visibility(secret=True, known_by=("berrit",)),
)


@dataclass(frozen=True)
class Said:
    session_id: str
    speaker_id: str
    speaker_name: str
    text: str
    npc_id: str | None = None
    dm_only: bool = False


MORE_TALK = (
    # Ysolde may read this session, but not Mother Sable's line, nor the DM-only one.
    Said("session-6", "p-lyra", "Lyra", "The caravan bells ring on the coast road again."),
    Said(
        "session-6",
        "sable",
        "Mother Sable",
        "The caravan passes the lighthouse at dawn.",
        npc_id="sable",
    ),
    Said(
        "session-6",
        "ghost",
        "Harbour Ghost",
        "The caravan never reached the crossing.",
        dm_only=True,
    ),
    Said("session-6", "p-kael", "Kael", "Then we wait for the caravan by the lighthouse."),
    # Withheld from Ysolde whole: its id names the Salt Knives (an id cannot be redacted).
    Said(
        "salt-knives-den", "p-kael", "Kael", "We hide behind the fish market and watch the caravan."
    ),
    # Withheld from every NPC: the DM's own session.
    Said(
        "vey-briefing", "vey", "Spymaster Vey", "The caravan will be watched from the lighthouse."
    ),
)
DM_ONLY_SESSIONS = frozenset({"vey-briefing"})


async def seed_world(memory: CampaignMemory, embedder: LocalMiniLMEmbedder) -> None:
    demo = await world.build(memory, embedder)
    await demo.graph.upsert_entity(SABLE)
    for order, session_id in enumerate(dict.fromkeys(said.session_id for said in MORE_TALK)):
        started = START + timedelta(days=7 * order)
        lines = [said for said in MORE_TALK if said.session_id == session_id]
        await demo.sessions.upsert(NewSession(id=session_id, title=None, started_at=started))
        ids = await demo.log.append_many(
            session_id,
            [
                NewEntry(
                    speaker_id=said.speaker_id,
                    speaker_name=said.speaker_name,
                    npc_id=said.npc_id,
                    text=said.text,
                    spoken_at=started + timedelta(seconds=20 * index),
                )
                for index, said in enumerate(lines)
            ],
        )
        marked = [i for i, said in zip(ids, lines, strict=True) if said.dm_only]
        if marked:
            await demo.log.set_dm_only(marked, True)
        if session_id in DM_ONLY_SESSIONS:
            await demo.sessions.set_dm_only(session_id, True)
        await end_session(memory.db, world.CAMPAIGN, session_id, embedder)


@pytest.fixture(scope="module")
def hidden_world_dsn(test_server: PostgresForTests, offline_embedder: LocalMiniLMEmbedder) -> str:
    async def seed(memory: CampaignMemory) -> None:
        await seed_world(memory, offline_embedder)

    return seeded_database(
        test_server, test_server.template_384, 384, seed, shared_as="hidden like unknown"
    )


@contextlib.asynccontextmanager
async def client_of(
    dsn: str, embedder: LocalMiniLMEmbedder, npc: str | None
) -> AsyncIterator[Client]:
    async with read_only(dsn, 384, world.CAMPAIGN) as memory:
        view = await View.open(memory, npc, embedder)
        async with Client(build_server(ServerState(view, unhurried(Tier.DEEP)))) as client:
            yield client


# --- what a reply is, as text to compare ---------------------------------------------------


async def tool(client: Client, tool_name: str, /, **arguments: Any) -> str:
    result = await client.call_tool(tool_name, arguments)
    return json.dumps(
        {
            "is_error": result.is_error,
            "text": text_of(result.content),
            "structured": result.structured_content,
        },
        sort_keys=True,
    )


async def resource(client: Client, uri: str) -> str:
    try:
        read = await client.read_resource(uri)
    except MCPError as exc:
        return json.dumps(
            {"code": exc.error.code, "message": exc.error.message, "data": exc.error.data},
            sort_keys=True,
        )
    return json.dumps([content.model_dump(mode="json") for content in read.contents])


async def completion(client: Client, template: str, argument: str, typed: str) -> str:
    reference = ResourceTemplateReference(type="ref/resource", uri=template)
    offered = await client.complete(reference, {"name": argument, "value": typed})
    return offered.completion.model_dump_json()


Probe = Callable[[Client, str], Awaitable[str]]
QUERY = "the caravan by the lighthouse"


def _hot(client: Client, value: str) -> Awaitable[str]:
    return resource(client, f"glyphoxa://npc/{VIEWER}/hot?session={quote(value, safe='')}")


# Every argument that names a speaker, NPC, entity or session, each given the value asked.
PROBES: dict[str, Probe] = {
    "search_sessions session_id": lambda c, v: tool(
        c, "memory.search_sessions", query=QUERY, session_id=v
    ),
    "search_sessions speaker": lambda c, v: tool(
        c, "memory.search_sessions", query=QUERY, speaker=v
    ),
    "search_sessions npc_id": lambda c, v: tool(c, "memory.search_sessions", query=QUERY, npc_id=v),
    "query_entities name": lambda c, v: tool(c, "memory.query_entities", name=v),
    "query_entities related_to": lambda c, v: tool(c, "memory.query_entities", related_to=v),
    "get_session_summary session_id": lambda c, v: tool(
        c, "memory.get_session_summary", session_id=v
    ),
    "search_facts entity": lambda c, v: tool(c, "memory.search_facts", query=QUERY, entity=v),
    "search_facts session_id": lambda c, v: tool(
        c, "memory.search_facts", query=QUERY, session_id=v
    ),
    "hot context session": _hot,
    "hot context npc_id": lambda c, v: resource(c, f"glyphoxa://npc/{quote(v, safe='')}/hot"),
    "prefetch npc_id": lambda c, v: resource(
        c, f"glyphoxa://npc/{quote(v, safe='')}/prefetch?utterance=hello"
    ),
    "completion of hot npc_id": lambda c, v: completion(c, HOT_URI_TEMPLATE, "npc_id", v),
    "completion of hot session": lambda c, v: completion(c, HOT_URI_TEMPLATE, "session", v),
    "completion of prefetch npc_id": lambda c, v: completion(c, PREFETCH_URI_TEMPLATE, "npc_id", v),
}


@dataclass(frozen=True)
class Case:
    """A value hidden from Ysolde, and one of the same shape that names nothing at all."""

    hidden: str
    unknown: str


CASES = {
    "hidden entity id": Case("salt-knives", "salt-knaves"),
    "hidden entity name": Case("Salt Knives", "Salt Knaves"),
    "speaker heard only in a DM-only session": Case("Spymaster Vey", "Spymaster Vex"),
    "speaker of DM-only lines only": Case("Harbour Ghost", "Harbour Guest"),
    "DM-only session id": Case("session-5", "session-9"),
    "session whose id names a hidden entity": Case("salt-knives-den", "salt-knaves-den"),
    "hidden NPC id": Case("sable", "sabre"),
    "hidden NPC name": Case("Mother Sable", "Mother Sabre"),
}


def masked(reply: str, value: str) -> str:
    """`reply` with `value` masked wherever it is repeated, as said or as a URI spells it."""
    return reply.replace(quote(value, safe=""), MASK).replace(value, MASK)


async def replies(client: Client, value: str) -> dict[str, str]:
    """Each probe's reply to `value`, the value masked."""
    return {name: masked(await probe(client, value), value) for name, probe in PROBES.items()}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_a_hidden_value_is_answered_exactly_like_an_unknown_one(
    hidden_world_dsn: str, offline_embedder: LocalMiniLMEmbedder, case: str
) -> None:
    asked = CASES[case]
    async with client_of(hidden_world_dsn, offline_embedder, VIEWER) as client:
        hidden, unknown = await replies(client, asked.hidden), await replies(client, asked.unknown)
    told_apart = [
        f"{probe}:\n  hidden:  {hidden[probe]}\n  unknown: {unknown[probe]}"
        for probe in PROBES
        if hidden[probe] != unknown[probe]
    ]
    assert not told_apart, f"{len(told_apart)} replies tell {asked.hidden!r} exists:\n" + (
        "\n".join(told_apart)
    )


# What a pooled connection runs once when it is opened, whenever the pool opens one.
CONNECTION_SET_UP = frozenset({SELECT_PGVECTOR_VERSION, ITERATIVE_SCAN_SETTINGS})


def statements_run(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The statements the server runs from now on, by their text and how many rows each
    returned (what a connection runs when the pool opens it, the driver's introspection of a
    type included, left out): a row the database finds and the server then drops takes
    longer to answer than no row."""
    run: list[str] = []
    execute = Connection._do_execute

    async def counted(self: Connection, query: str, *args: Any, **kwargs: Any) -> Any:
        setting_up = (
            query in CONNECTION_SET_UP
            or "typeinfo_tree" in query
            or "pg_catalog.pg_type" in query
            or "'jit'" in query
        )
        answer = await execute(self, query, *args, **kwargs)
        if not setting_up:
            rows = answer[0]
            returned = len(rows) if isinstance(rows, list) else rows
            run.append(f"{' '.join(query.split())} -> {returned}")
        return answer

    monkeypatch.setattr(Connection, "_do_execute", counted)
    return run


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_a_hidden_value_is_answered_after_the_same_statements_as_an_unknown_one(
    hidden_world_dsn: str,
    offline_embedder: LocalMiniLMEmbedder,
    case: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not sooner, nor later: the time an answer takes is no side channel either."""
    asked = CASES[case]
    run = statements_run(monkeypatch)
    told_apart = []
    async with client_of(hidden_world_dsn, offline_embedder, VIEWER) as client:
        for name, probe in PROBES.items():
            await probe(client, asked.unknown)  # what is kept after a first call, kept
            run.clear()
            await probe(client, asked.hidden)
            hidden = Counter(run)
            run.clear()
            await probe(client, asked.unknown)
            if hidden != Counter(run):
                told_apart.append(
                    f"{name}: {sorted((hidden - Counter(run)).elements())} / "
                    f"{sorted((Counter(run) - hidden).elements())}"
                )
    assert not told_apart, "\n".join(told_apart)


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
async def test_the_dm_is_answered_differently_so_the_probes_reach_what_is_hidden(
    hidden_world_dsn: str, offline_embedder: LocalMiniLMEmbedder, case: str
) -> None:
    asked = CASES[case]
    async with client_of(hidden_world_dsn, offline_embedder, None) as client:
        hidden, unknown = await replies(client, asked.hidden), await replies(client, asked.unknown)
    assert any(hidden[probe] != unknown[probe] for probe in PROBES)
