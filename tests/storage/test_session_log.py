from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewChunk, NewEntry, NewSession, SearchFilters, build
from glyphoxa_mcp.errors import InvalidInputError, NotFoundError
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.storage.semantic_index import content_hash
from glyphoxa_mcp.storage.session_log import SELECT_SPEAKERS

START = datetime(2026, 3, 14, 19, 0, tzinfo=UTC)


def line(seconds: int, speaker: str, text: str, **extra: object) -> NewEntry:
    return NewEntry(
        speaker_id=speaker.lower(),
        speaker_name=speaker,
        text=text,
        spoken_at=START + timedelta(seconds=seconds),
        **extra,
    )


TALK = [
    line(0, "Mira", "We should ask the innkeeper about the missing caravan."),
    line(30, "Grimjaw", "The caravan left for Saltmere three days ago.", npc_id="grimjaw"),
    line(60, "Mira", "Did anyone see the caravan after the bridge?"),
    line(400, "Grimjaw", "Nobody crosses the bridge at night.", npc_id="grimjaw"),
    line(420, "Tomas", "Then we go at dawn and look for wagon tracks."),
]


async def test_many_entries_are_stored_once_even_when_sent_twice(memory: CampaignMemory) -> None:
    first = await memory.log.append_many("s1", TALK)
    again = await memory.log.append_many("s1", TALK)
    assert len(first) == 5 and again == []
    stored = await memory.log.entries("s1")
    assert [e.text for e in stored] == [e.text for e in TALK]


async def test_one_entry_keeps_raw_and_corrected_text(memory: CampaignMemory) -> None:
    entry = await memory.log.append(
        "s1", line(5, "Mira", "We ride to Saltmere.", raw_text="we ride to salt mirror")
    )
    assert entry.text == "We ride to Saltmere." and entry.raw_text == "we ride to salt mirror"
    again = await memory.log.append(
        "s1", line(5, "Mira", "We ride to Saltmere.", raw_text="we ride to salt mirror")
    )
    assert again.id == entry.id


async def test_recent_window_ends_at_the_latest_entry(memory: CampaignMemory) -> None:
    await memory.log.append_many("s1", TALK)
    recent = await memory.log.recent("s1", window=timedelta(minutes=5))
    # The window is (420 s - 300 s, 420 s]: only the last two lines.
    assert [e.spoken_at for e in recent] == [TALK[3].spoken_at, TALK[4].spoken_at]
    capped = await memory.log.recent("s1", window=timedelta(hours=1), limit=2)
    assert [e.text for e in capped] == [TALK[3].text, TALK[4].text]
    earlier = await memory.log.recent(
        "s1", window=timedelta(seconds=45), until=START + timedelta(seconds=60)
    )
    assert [e.text for e in earlier] == [TALK[1].text, TALK[2].text]


async def test_search_ranks_by_relevance_not_by_time(memory: CampaignMemory) -> None:
    await memory.log.append_many("s1", TALK)
    results = await memory.log.search("caravan bridge")
    texts = [r.entry.text for r in results]
    # Only the third line mentions both words; it outranks the later and earlier ones.
    assert texts[0] == TALK[2].text
    assert set(texts) == {TALK[0].text, TALK[1].text, TALK[2].text, TALK[3].text}
    assert [r.rank for r in results] == sorted((r.rank for r in results), reverse=True)


async def test_a_rare_word_counts_for_more_than_a_repeated_common_one(
    memory: CampaignMemory,
) -> None:
    await memory.log.append_many(
        "s1",
        [
            line(0, "Mira", "The caravan is late, the caravan is always late."),
            line(10, "Tomas", "Ask the innkeeper."),
            line(20, "Mira", "That caravan again."),
        ],
    )
    found = await memory.log.search("caravan innkeeper")
    assert [m.entry.text for m in found][:2] == [
        "Ask the innkeeper.",
        "The caravan is late, the caravan is always late.",
    ]
    # The statistics follow the log: once the innkeeper is everywhere, the caravan is news.
    await memory.log.append_many(
        "s1", [line(30 + i, "Tomas", f"The innkeeper nods {i} times.") for i in range(6)]
    )
    assert (await memory.log.search("caravan innkeeper"))[0].entry.text.startswith(
        "The caravan is late"
    )


async def test_search_filters_apply_in_sql(memory: CampaignMemory) -> None:
    await memory.sessions.upsert(NewSession(id="s2"))
    await memory.log.append_many("s1", TALK)
    await memory.log.append_many("s2", [line(9000, "Mira", "The caravan is found.")])

    async def texts(**filters: object) -> list[str]:
        found = await memory.log.search("caravan", SearchFilters(**filters))
        return sorted(r.entry.text for r in found)

    assert await texts(session_id="s2") == ["The caravan is found."]
    assert await texts(speaker_ids=("grimjaw",)) == [TALK[1].text]
    assert await texts(npc_id="grimjaw") == [TALK[1].text]
    assert await texts(
        after=START + timedelta(seconds=30), before=START + timedelta(seconds=61)
    ) == sorted([TALK[1].text, TALK[2].text])


async def test_campaigns_never_see_each_others_transcripts(
    memory: CampaignMemory, other_campaign: CampaignMemory
) -> None:
    await memory.log.append_many("s1", TALK)
    assert await other_campaign.log.search("caravan") == []
    assert await other_campaign.log.entries("s1") == []
    assert await other_campaign.log.recent("s1") == []
    ids = [e.id for e in await memory.log.entries("s1")]
    assert await other_campaign.log.get_many(ids) == []


async def test_entries_for_an_unknown_session_are_refused(memory: CampaignMemory) -> None:
    with pytest.raises(NotFoundError, match="session does not exist"):
        await memory.log.append_many("no-such-session", TALK)
    assert await memory.log.entries("no-such-session") == []


@pytest.mark.parametrize("query", ["", "   ", "\x00", "caravan " * 1000])
async def test_blank_or_binary_queries_are_refused(memory: CampaignMemory, query: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        await memory.log.search(query)
    assert caught.value.field == "query"


async def test_sql_in_a_query_is_just_words(memory: CampaignMemory) -> None:
    await memory.log.append_many("s1", TALK)
    found = await memory.log.search("caravan'; DROP TABLE session_entries; --")
    assert found
    assert len(await memory.log.entries("s1")) == len(TALK)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"text": "   "}, "text"),
        ({"text": "x" * 20_001}, "text"),
        ({"text": "bad \x00 byte"}, "text"),
        ({"speaker_name": ""}, "speaker_name"),
        ({"duration_ms": -5}, "duration_ms"),
        ({"spoken_at": "yesterday-ish"}, "spoken_at"),
    ],
)
def test_bad_entries_name_the_field(changes: dict[str, object], field: str) -> None:
    values = {"speaker_id": "mira", "speaker_name": "Mira", "text": "hi", "spoken_at": START}
    with pytest.raises(InvalidInputError) as caught:
        build(NewEntry, **(values | changes))
    assert caught.value.field == field


async def test_speakers_are_found_by_id_or_name(memory: CampaignMemory) -> None:
    await memory.log.append_many("s1", TALK)
    assert await memory.log.speaker_ids("GRIMJAW") == ["grimjaw"]
    assert await memory.log.speaker_ids("mira") == ["mira"]
    assert await memory.log.speaker_ids("nobody") == []
    # One name, several ids (two players called Mira, one with two microphones), each id
    # once however many lines it said; an id is found as itself.
    await memory.log.append_many(
        "s1",
        [
            line(500 + i, "Mira", f"Line {i}.").model_copy(update={"speaker_id": speaker})
            for i, speaker in enumerate(["mira-2", "mira-b", "mira-2", "mira-b", "mira-2"])
        ],
    )
    assert await memory.log.speaker_ids("MIRA") == ["mira", "mira-2", "mira-b"]
    assert await memory.log.speaker_ids("mira-b") == ["mira-b"]
    none = await memory.log.search("caravan", SearchFilters(speaker_ids=()))
    assert none == []


async def test_a_speaker_is_found_only_by_the_lines_the_reader_may_read(
    memory: CampaignMemory,
) -> None:
    await memory.sessions.upsert(NewSession(id="prep", title="The DM's notes"))
    (whisper,) = await memory.log.append_many("s1", [line(0, "Vey", "The vault code is 4471.")])
    await memory.log.set_dm_only([whisper], True)
    await memory.log.append_many("prep", [line(0, "Anselm", "Anselm is the traitor.")])
    # An NPC reads neither DM-only lines nor withheld sessions: by them, nobody spoke.
    for speaker in ("Vey", "vey", "Anselm", "anselm"):
        assert await memory.log.speaker_ids(speaker, reader="an-npc", skipping={"prep"}) == [], (
            speaker
        )
    # The DM reads every line.
    assert await memory.log.speaker_ids("Vey") == ["vey"]
    assert await memory.log.speaker_ids("anselm") == ["anselm"]


async def test_a_speaker_hidden_from_the_reader_is_found_by_no_row(memory: CampaignMemory) -> None:
    """A hidden speaker is no row, by its id as by its name, as a name no one has; another
    speaker of the same name is still found."""
    await memory.log.append_many("s1", [line(0, "Mira", "Fresh bread!"), line(1, "Sable", "Hm.")])
    other_mira = line(2, "Mira", "Two coppers.").model_copy(update={"speaker_id": "mira-b"})
    await memory.log.append_many("s1", [other_mira])
    hiding = {"sable", "mira-b"}
    for speaker in ("Sable", "sable"):
        assert await memory.log.speaker_ids(speaker, hiding=hiding) == []
    assert await memory.log.speaker_ids("mira-b", hiding=hiding) == []
    assert await memory.log.speaker_ids("Mira", hiding=hiding) == ["mira"]
    assert await memory.log.speaker_ids("Mira") == ["mira", "mira-b"]


async def _blocks_read(db: Database, sql: str, *args: object) -> int:
    """The blocks a statement reads, all its plan's nodes counted at the root, on one
    connection once the statement has run there (a first run reads the catalog too)."""
    explain = f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}"
    async with db.pool.acquire() as conn:
        await conn.fetchval(explain, *args)
        plan = await conn.fetchval(explain, *args)
    root = json.loads(plan)[0]["Plan"]
    return int(root["Shared Hit Blocks"] + root["Shared Read Blocks"])


async def test_a_hidden_speaker_costs_the_lookup_no_more_than_a_name_no_one_has(
    db: Database, memory: CampaignMemory
) -> None:
    """However much a hidden speaker said, looking it up reads what looking up a name no
    one has reads, give or take the index page its first line is on: the time of the
    answer says nothing of it."""
    chatter = [line(second, "Sable", f"Word {second} of many.") for second in range(2000)]
    await memory.log.append_many("s1", [line(0, "Mira", "Fresh bread!"), *chatter])

    def looking_up(name: str) -> tuple[object, ...]:
        # The DM reading (every line readable), every session, Sable hidden.
        return (memory.campaign_id, name, None, [], ["sable"])

    hidden = await _blocks_read(db, SELECT_SPEAKERS, *looking_up("Sable"))
    unknown = await _blocks_read(db, SELECT_SPEAKERS, *looking_up("Sabre"))
    assert hidden <= unknown + 4, (hidden, unknown)


async def _row_counts(db: Database, memory: CampaignMemory) -> dict[str, int]:
    rows = await db.pool.fetch(
        "SELECT table_name, row_count FROM campaign_row_counts WHERE campaign_id = $1",
        memory.campaign_id,
    )
    return {row["table_name"]: row["row_count"] for row in rows}


async def test_row_counts_follow_every_insert_and_delete(
    db: Database, memory: CampaignMemory, other_campaign: CampaignMemory
) -> None:
    await memory.log.append_many("s1", TALK)
    await memory.log.append_many("s1", TALK)  # nothing new
    await other_campaign.log.append_many("s1", TALK[:2])
    entries = await memory.log.entries("s1")
    chunks = [
        NewChunk(
            session_id="s1",
            content=e.text,
            embedding=[1, 0, 0, 0],
            started_at=e.spoken_at,
            ended_at=e.spoken_at,
            entry_ids=(e.id,),
        )
        for e in entries
    ]
    await memory.index.upsert(chunks)
    await memory.index.upsert(chunks[:2])  # stored already
    assert await _row_counts(db, memory) == {"session_entries": 5, "chunks": 5}
    assert await memory.index.remove_stale("s1", {content_hash(c.content) for c in chunks[2:]}) == 2
    assert await _row_counts(db, memory) == {"session_entries": 5, "chunks": 3}
    await db.pool.execute("DELETE FROM sessions WHERE campaign_id = $1", memory.campaign_id)
    assert await _row_counts(db, memory) == {"session_entries": 0, "chunks": 0}
    assert await _row_counts(db, other_campaign) == {"session_entries": 2}
