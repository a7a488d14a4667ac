from __future__ import annotations

from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import Word
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.pipeline.ingest import ingest_entries
from glyphoxa_mcp.pipeline.transcripts import looks_like_jsonl, read_jsonl, read_plain
from glyphoxa_mcp.storage.memory import CampaignMemory

START = datetime(2026, 3, 7, 19, tzinfo=UTC)
PLAIN = ["Brannoch: Welcome, friends!", "", "Kael: Any news of the caravan?"]
JSONL = [
    '{"speaker_id": "p1", "speaker_name": "Kael", "text": "We ride to Saltmere.", '
    '"timestamp": "2026-03-07T19:00:05Z", "words": [{"word": "We", "confidence": 0.99}, '
    '{"word": "ride", "confidence": 0.97}, {"word": "to", "confidence": 0.99}, '
    '{"word": "salt", "confidence": 0.41}, {"word": "mirror", "confidence": 0.38}], '
    '"duration_ms": 1800, "speaker_extra": "ignored"}'
]


def test_plain_lines_get_speakers_times_and_stable_keys() -> None:
    first = read_plain(PLAIN, START).entries
    again = read_plain(PLAIN, datetime(2030, 1, 1, tzinfo=UTC)).entries
    assert [(e.speaker_name, e.speaker_id, e.text) for e in first] == [
        ("Brannoch", "brannoch", "Welcome, friends!"),
        ("Kael", "kael", "Any news of the caravan?"),
    ]
    assert [e.source_key for e in first] == [e.source_key for e in again]
    assert (first[1].spoken_at - first[0].spoken_at).total_seconds() == 10
    with pytest.raises(InvalidInputError, match=r"t\.txt:2: expected 'Speaker: text'"):
        read_plain(["A: ok", "no speaker here"], START, "t.txt")
    assert looks_like_jsonl(JSONL[0]) and not looks_like_jsonl("\n".join(PLAIN))


async def test_ingesting_twice_adds_nothing_and_keeps_words(db: Database) -> None:
    entries = read_jsonl(JSONL).entries
    first = await ingest_entries(db, "coast", "s1", entries, title="Night one")
    again = await ingest_entries(db, "coast", "s1", entries)
    assert (first.added, again.added) == (1, 0)
    memory = CampaignMemory(db, "coast")
    [stored] = await memory.log.entries("s1")
    assert stored.words is not None and stored.words[3] == Word(word="salt", confidence=0.41)
    assert stored.duration_ms == 1800
    session = await memory.sessions.get("s1")
    assert session.title == "Night one" and session.started_at == stored.spoken_at


async def test_a_failed_ingest_stores_nothing(db: Database) -> None:
    entries = read_plain(PLAIN, START).entries
    with pytest.raises(InvalidInputError):
        await ingest_entries(db, "bad campaign id", "s1", entries)
    assert await CampaignMemory(db, "coast").sessions.list() == []


def scene_transcript() -> list[str]:
    def said(second: int, speaker: str, text: str) -> str:
        return (
            f'{{"speaker_id": "{speaker.lower()}", "speaker_name": "{speaker}", '
            f'"text": "{text}", "timestamp": "2026-03-07T19:00:{second:02d}Z"}}'
        )

    return [
        said(0, "Kael", "We are early."),
        '{"scene": {"location": "the kettle", "present": ["Brannoch", "Kael"], '
        '"title": "At the inn"}}',
        said(5, "Brannoch", "Welcome, friends!"),
        '{"scene": {"location": "Greywater Crossing", "present": ["Old Berrit"]}}',
        said(30, "Berrit", "Mind the ford."),
    ]


async def load_sample(db: Database) -> CampaignMemory:
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db, file, "demo")
    return CampaignMemory(db, "demo")


async def test_the_scenes_a_transcript_starts_are_stored_resolved_to_entities(
    db: Database,
) -> None:
    memory = await load_sample(db)
    transcript = read_jsonl(scene_transcript(), "night.jsonl")
    report = await ingest_entries(db, "demo", "s1", transcript.entries, scenes=transcript.scenes)
    again = await ingest_entries(db, "demo", "s1", transcript.entries, scenes=transcript.scenes)
    assert (report.added, report.scenes, again.added, again.scenes) == (3, 2, 0, 2)
    inn, crossing = await memory.scenes.of_session("s1")
    brannoch = (await memory.graph.find_entities(name="Brannoch"))[0].id
    assert (inn.location_id, inn.present, inn.title) == ("red-kettle", (brannoch,), "At the inn")
    assert inn.started_at == datetime(2026, 3, 7, 19, 0, 5, tzinfo=UTC)
    assert (crossing.present, crossing.title) == (("berrit",), None)


async def test_a_speaker_named_as_an_npc_is_that_npc(db: Database) -> None:
    memory = await load_sample(db)
    transcript = read_plain(
        ["Captain Ysolde: Halt, the crossing is closed.", "Kael: We are in a hurry.", "DM: Rain."],
        datetime(2026, 3, 7, 19, tzinfo=UTC),
        "night.txt",
    )
    await ingest_entries(db, "demo", "s1", transcript.entries)
    spoken = {e.speaker_name: e.npc_id for e in await memory.log.entries("s1")}
    # By her name, though the speaker the plain line gives is "captain-ysolde"; a player
    # (Kael) and the DM are no NPC.
    assert spoken == {"Captain Ysolde": "ysolde", "Kael": None, "DM": None}
    heard = await memory.db.pool.fetchval(
        "SELECT heard_by FROM session_entries WHERE speaker_name = 'Captain Ysolde'"
    )
    assert heard == ["ysolde"]


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('{"scene": {"location": "Brannoch"}}', r"night\.jsonl:2: scene\.location: 'Brannoch' is"),
        ('{"scene": {"present": ["Saltmere"]}}', r"night\.jsonl:2: scene\.present: 'Saltmere' is"),
        ('{"scene": {"present": ["Mirewatch"]}}', r"night\.jsonl:2: scene\.present: no entity"),
    ],
)
async def test_a_scene_naming_what_the_campaign_does_not_hold_stores_nothing(
    db: Database, marker: str, message: str
) -> None:
    memory = await load_sample(db)
    lines = scene_transcript()
    lines[1] = marker
    transcript = read_jsonl(lines, "night.jsonl")
    with pytest.raises(InvalidInputError, match=message):
        await ingest_entries(db, "demo", "s1", transcript.entries, scenes=transcript.scenes)
    assert await memory.sessions.list() == []
    assert await memory.scenes.of_session("s1") == []


async def test_every_bad_scene_of_a_transcript_is_reported_in_one_run(db: Database) -> None:
    await load_sample(db)
    lines = scene_transcript()
    lines[1] = '{"scene": {"location": "Brannoch"}}'
    lines[3] = '{"scene": {"present": ["Mirewatch"]}}'
    transcript = read_jsonl(lines, "night.jsonl")
    with pytest.raises(InvalidInputError) as refused:
        await ingest_entries(db, "demo", "s1", transcript.entries, scenes=transcript.scenes)
    assert [line.split(":")[1] for line in refused.value.message.splitlines()] == ["2", "4"]
