"""Property: in a witnessed campaign no NPC reads a line it did not hear, whatever the scenes,
who was present, who spoke and what the DM kept to themselves; and it finds every line it
did hear. Random sessions (hypothesis), processed into passages, read through the tools an
NPC has: session search (words and meaning, with the DEEP tier's graph expansion), the hot
context and the session summary.

Who heard a line, independently of the database's rule: the NPC who said it; those named
present in its scene and the NPCs who speak in it; outside any scene, the NPCs who speak in
the session; never a line the DM keeps to themselves."""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewEntity, NewEntry, NewSession
from glyphoxa_mcp.domain.scenes import Scene
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.finish import end_session
from glyphoxa_mcp.providers.wordllama_embedder import WordLlamaEmbedder
from glyphoxa_mcp.storage.campaigns import Campaigns
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.limits import clamp
from glyphoxa_mcp.views.view import View
from tests.conftest import DatabaseFactory, PostgresForTests, _database_from

# Fifty random sessions, each ended and read by four NPCs: an exhaustive comparison.
pytestmark = pytest.mark.slow

NPCS = ("anwen", "bram", "corvin", "delys")
PLAYERS = ("p-kael", "p-lyra")
START = datetime(2026, 5, 2, 19, tzinfo=UTC)
# Each line carries a word of its own (letters only, so that it is one lexeme) and a word
# every line shares, to search them all by.
SHARED_WORD = "lantern"
_counter = itertools.count()


@dataclass(frozen=True)
class Said:
    minute: int
    speaker: str  # an NPC id or a player id
    dm_only: bool


@dataclass(frozen=True)
class Case:
    scenes: tuple[tuple[int, frozenset[str]], ...]  # (minute it starts, NPCs present)
    lines: tuple[Said, ...]


def _word(number: int) -> str:
    letters = "".join("abcdefghij"[int(d)] for d in f"{number:04d}")
    return f"zorb{letters}"


scene_starts = st.lists(st.integers(0, 40), max_size=3, unique=True).map(sorted)
cases = st.builds(
    lambda starts, presents, lines: Case(
        tuple(
            (start, frozenset(present)) for start, present in zip(starts, presents, strict=False)
        ),
        tuple(sorted(lines, key=lambda s: s.minute)),
    ),
    scene_starts,
    st.lists(st.sets(st.sampled_from(NPCS), max_size=3), min_size=3, max_size=3),
    st.lists(
        st.builds(
            Said,
            st.integers(0, 45),
            st.sampled_from(NPCS + PLAYERS),
            st.sampled_from((False, False, False, True)),
        ),
        min_size=1,
        max_size=8,
        unique_by=lambda s: s.minute,
    ),
)


def heard(case: Case, said: Said, npc: str) -> bool:
    """Whether `npc` heard `said`, by the model, not by the database."""
    if said.dm_only:
        return False
    if said.speaker == npc:
        return True
    scene = None
    for start, present in case.scenes:
        if start <= said.minute:
            scene = (start, present)
    if scene is None:
        return npc in {line.speaker for line in case.lines}
    # An NPC who speaks in a scene was there.
    start, present = scene
    ends = min((s for s, _ in case.scenes if s > start), default=None)
    spoke_there = any(
        line.speaker == npc and start <= line.minute and (ends is None or line.minute < ends)
        for line in case.lines
    )
    return npc in present or spoke_there


@dataclass(frozen=True)
class World:
    portal: BlockingPortal
    db: Database
    embedder: WordLlamaEmbedder


@pytest.fixture(scope="module")
def world(test_server: PostgresForTests, databases: DatabaseFactory) -> Iterator[World]:
    with start_blocking_portal() as portal, contextlib.ExitStack() as stack:
        db = stack.enter_context(
            portal.wrap_async_context_manager(
                _database_from(databases, test_server.template_256, 256)
            )
        )
        yield World(portal, db, WordLlamaEmbedder())


async def played(world: World, case: Case) -> tuple[CampaignMemory, dict[str, Said]]:
    """A new campaign of its own with the case's session, ended offline."""
    campaign = f"prop-{next(_counter)}"
    await Campaigns(world.db).ensure(campaign)
    memory = CampaignMemory(world.db, campaign)
    for npc in NPCS:
        await memory.graph.upsert_entity(NewEntity(id=npc, type=EntityType.NPC, name=npc.title()))
    await memory.sessions.upsert(NewSession(id="s1", started_at=START))
    await memory.scenes.record(
        [
            Scene(session_id="s1", started_at=START + timedelta(minutes=m), present=tuple(p))
            for m, p in case.scenes
        ]
    )
    words = {}
    entries = []
    for number, said in enumerate(case.lines):
        word = _word(number)
        words[word] = said
        npc = said.speaker if said.speaker in NPCS else None
        entries.append(
            NewEntry(
                speaker_id=said.speaker,
                speaker_name=said.speaker.removeprefix("p-").title(),
                npc_id=npc,
                text=f"By the {SHARED_WORD} I swear {word} is the word tonight.",
                spoken_at=START + timedelta(minutes=said.minute, seconds=30),
            )
        )
    ids = await memory.log.append_many("s1", entries)
    hidden = [i for i, said in zip(ids, case.lines, strict=True) if said.dm_only]
    if hidden:
        await memory.log.set_dm_only(hidden, True)
    await end_session(world.db, campaign, "s1", world.embedder)
    return memory, words


async def everything_read(memory: CampaignMemory, embedder: WordLlamaEmbedder, npc: str) -> str:
    view = View(memory, npc, embedder)
    found = []
    for query in (SHARED_WORD, f"what did {NPCS[0].title()} say about the {SHARED_WORD}"):
        for deep in (False, True):
            result = await view.search_sessions(query, clamp(20, 20), graph_expansion=deep)
            found += [hit.text for hit in result.results]
    hot = await view.hot_context(npc, "s1")
    summary = await view.session_summary("s1")
    return "\n".join([*found, hot.prompt, summary.model_dump_json()])


@settings(
    max_examples=50,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=cases)
def test_no_npc_reads_a_line_it_did_not_hear_and_finds_those_it_did(
    world: World, case: Case
) -> None:
    memory, words = world.portal.call(played, world, case)
    for npc in NPCS:
        text = world.portal.call(everything_read, memory, world.embedder, npc)
        leaked = [w for w, said in words.items() if not heard(case, said, npc) and w in text]
        assert leaked == [], (npc, leaked)
        missed = [w for w, said in words.items() if heard(case, said, npc) and w not in text]
        assert missed == [], (npc, missed)
