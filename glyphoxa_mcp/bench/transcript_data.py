"""The synthetic sessions: who was there, what was said, and the passages `process` would cut.
(pure, seeded)

A session is a run of scenes. Each scene has a place, a topic and a few NPCs; its lines are a
few seconds apart, and scenes are more than the chunker's scene break apart, so passages never
straddle two scenes, as in real play. Each scene is stored as one (sql/031): its NPCs are
those present, and the benchmarked NPC's companion, who is present in every scene
(bench/dataset.py says why).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.bench import word_pools
from glyphoxa_mcp.bench.rows import ChunkRow, EntityRow, EntryRow, SceneRow, SessionRow, Weighted
from glyphoxa_mcp.bench.sentences import NameDraws, fill
from glyphoxa_mcp.domain.models import Entry
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.pipeline.chunking import DEFAULT_POLICY, passages

FIRST_SESSION = datetime(2024, 1, 6, 18, 0, tzinfo=UTC)
SESSION_EVERY = timedelta(days=7)
SCENE_LINES = (30, 90)
SECONDS_BETWEEN_LINES = (3, 12)
# Longer than the chunker's scene break, so passages end with their scene.
SCENE_GAP = (DEFAULT_POLICY.scene_break + timedelta(seconds=30), timedelta(minutes=9))
CAST = (6, 14)
NPCS_PER_SCENE = (2, 5)
# What else a session is about; most names said in it are of these (the rest are callbacks
# to anything in the campaign).
SESSION_POOLS = {
    EntityType.LOCATION: (3, 6),
    EntityType.ITEM: (2, 6),
    EntityType.FACTION: (1, 3),
    EntityType.EVENT: (1, 3),
}
LOCAL_SHARE = 0.9
# The benchmarked NPC comes back in this share of the sessions, and is in the current one.
BENCH_NPC_PRESENCE = 0.4
DM = ("dm", "DM")
SPEAKER_SHARES = (("dm", 0.25), ("player", 0.4), ("npc", 0.35))
MS_PER_WORD = 350


@dataclass(frozen=True)
class Transcripts:
    sessions: tuple[SessionRow, ...]
    entries: tuple[EntryRow, ...]
    scenes: tuple[SceneRow, ...]
    chunks: tuple[ChunkRow, ...]
    # Each chunk's (topic, sub-topic), for its embedding.
    chunk_topics: tuple[tuple[int, int], ...]
    # The entities named or speaking in each session, by session id.
    involved: dict[str, tuple[str, ...]]


def session_plan(count: int) -> list[SessionRow]:
    """The sessions, weekly, before anything was said in them."""
    width = max(3, len(str(count)))
    return [
        SessionRow(
            id=f"s{number:0{width}d}",
            title=f"Session {number}",
            started_at=FIRST_SESSION + SESSION_EVERY * (number - 1),
            ended_at=None,
            summary=None,
        )
        for number in range(1, count + 1)
    ]


def _split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


class TranscriptWriter:
    """Writes the sessions of one campaign, keeping its random state between them; what it
    wrote is in `entries`."""

    def __init__(
        self,
        entities: Sequence[EntityRow],
        bench_npc: str,
        seed: str,
        companion: str | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.companion = companion
        self.names = NameDraws(entities, self.rng)
        by_id = {e.id: e for e in entities}
        self.bench_npc = by_id[bench_npc]
        self.players = [e for e in entities if e.type is EntityType.PLAYER]
        self.npcs = Weighted([e for e in entities if e.type is EntityType.NPC], exponent=0.6)
        self.kinds = {
            kind: Weighted([e for e in entities if e.type is kind]) for kind in SESSION_POOLS
        }
        self.entries: list[EntryRow] = []
        self.scenes: list[SceneRow] = []

    def session(self, plan: SessionRow, lines: int, finished: bool) -> SessionRow:
        rng = self.rng
        cast = {}
        if finished is False or self.rng.random() < BENCH_NPC_PRESENCE:
            cast[self.bench_npc.id] = self.bench_npc
        cast_size = min(rng.randint(*CAST), len(self.npcs.items))
        while len(cast) < cast_size:
            npc = self.npcs.draw(rng)
            cast[npc.id] = npc
        pools = self._pools(list(cast.values()))
        names = self.names.within(pools, LOCAL_SHARE)
        topics = rng.sample(range(len(word_pools.TOPIC_NAMES)), rng.randint(2, 4))
        clock = plan.started_at
        written = 0
        scene_places: list[EntityRow] = []
        while written < lines:
            size = min(lines - written, rng.randint(*SCENE_LINES))
            place = rng.choice(pools[EntityType.LOCATION])
            scene_places.append(place)
            npcs = rng.sample(list(cast.values()), min(len(cast), rng.randint(*NPCS_PER_SCENE)))
            if not finished and written + size == lines and self.bench_npc not in npcs:
                # The session being played ends in a scene with the benchmarked NPC: the one
                # it is speaking in now.
                npcs[-1] = self.bench_npc
            present = {n.id for n in npcs} | ({self.companion} if self.companion else set())
            self.scenes.append(
                SceneRow(
                    session_id=plan.id,
                    started_at=clock,
                    location_id=place.id,
                    present=tuple(sorted(present)),
                    title=f"{plan.title}, scene {len(scene_places)}",
                )
            )
            topic, subtopic = rng.choice(topics), rng.randrange(word_pools.SUBTOPICS_PER_TOPIC)
            for _ in range(size):
                self.entries.append(
                    self._line(names, plan.id, clock, place, npcs, (topic, subtopic))
                )
                clock += timedelta(seconds=rng.randint(*SECONDS_BETWEEN_LINES))
            written += size
            gap = rng.uniform(*(g.total_seconds() for g in SCENE_GAP))
            clock += timedelta(seconds=gap)
        if not finished:
            return plan
        summary = " ".join(
            fill(
                template,
                rng,
                word_pools.TOPICS[word_pools.TOPIC_NAMES[topics[0]]],
                names,
                npcs=list(cast.values()),
                place=rng.choice(scene_places),
            )[0]
            for template in rng.sample(word_pools.SUMMARY_LINES, 4)
        )
        return replace(plan, ended_at=self.entries[-1].spoken_at, summary=summary)

    def _pools(self, cast: list[EntityRow]) -> dict[EntityType, Sequence[EntityRow]]:
        """The people, places and things a session is about."""
        pools: dict[EntityType, Sequence[EntityRow]] = {EntityType.NPC: cast}
        for kind, (fewest, most) in SESSION_POOLS.items():
            drawn = (self.kinds[kind].draw(self.rng) for _ in range(self.rng.randint(fewest, most)))
            pools[kind] = list({row.id: row for row in drawn}.values())
        return pools

    def _line(
        self,
        names: NameDraws,
        session_id: str,
        spoken_at: datetime,
        place: EntityRow,
        npcs: Sequence[EntityRow],
        topics: tuple[int, int],
    ) -> EntryRow:
        rng = self.rng
        topic, subtopic = topics
        role = rng.choices([r for r, _ in SPEAKER_SHARES], [s for _, s in SPEAKER_SHARES])[0]
        vocabulary = word_pools.topic_words(topic, subtopic)
        if rng.random() < 0.25:
            vocabulary = word_pools.TOPICS[word_pools.TOPIC_NAMES[topic]]
        npc_id = None
        templates: tuple[str, ...]
        if role == "npc":
            speaker = rng.choice(npcs)
            speaker_id, speaker_name, npc_id = speaker.id, speaker.name, speaker.id
            templates, others = word_pools.NPC_LINES, [n for n in npcs if n is not speaker] or npcs
        elif role == "player":
            speaker = rng.choice(self.players)
            speaker_id, speaker_name = f"p-{speaker.id}", speaker.name
            templates, others = word_pools.PLAYER_LINES, npcs
        else:
            speaker_id, speaker_name = DM
            templates, others = word_pools.DM_LINES, npcs
        text, named = fill(rng.choice(templates), rng, vocabulary, names, npcs=others, place=place)
        if role != "dm":
            named.insert(0, speaker.id)
        return EntryRow(
            session_id=session_id,
            source_key=f"{session_id}-{len(self.entries):07d}",
            speaker_id=speaker_id,
            speaker_name=speaker_name,
            text=text,
            npc_id=npc_id,
            spoken_at=spoken_at,
            duration_ms=MS_PER_WORD * len(text.split()),
            mentions=tuple(dict.fromkeys(named)),
            topic=topic,
            subtopic=subtopic,
        )


def generate_transcripts(
    plan: Sequence[SessionRow],
    entry_count: int,
    entities: Sequence[EntityRow],
    bench_npc: str,
    seed: int,
    companion: str | None = None,
) -> Transcripts:
    """Every session's scenes, its lines and its passages; all sessions are finished but the
    last, which is the one being played. `companion` is present in every scene."""
    writer = TranscriptWriter(entities, bench_npc, f"transcripts:{seed}", companion)
    sessions = []
    for number, (session, lines) in enumerate(
        zip(plan, _split(entry_count, len(plan)), strict=True)
    ):
        sessions.append(writer.session(session, lines, finished=number < len(plan) - 1))
    chunks, chunk_topics = cut_chunks(writer.entries)
    involved: dict[str, dict[str, None]] = {s.id: {} for s in sessions}
    for entry in writer.entries:
        involved[entry.session_id].update(dict.fromkeys(entry.mentions))
    return Transcripts(
        tuple(sessions),
        tuple(writer.entries),
        tuple(writer.scenes),
        chunks,
        chunk_topics,
        {session: tuple(ids) for session, ids in involved.items()},
    )


def cut_chunks(
    entries: Sequence[EntryRow],
) -> tuple[tuple[ChunkRow, ...], tuple[tuple[int, int], ...]]:
    """The passages `process` cuts from these entries, with the entities each one names;
    a passage whose text repeats an earlier one is stored once, as the index does."""
    chunks: list[ChunkRow] = []
    topics: list[tuple[int, int]] = []
    seen: set[str] = set()
    start = 0
    while start < len(entries):
        end = start
        while end < len(entries) and entries[end].session_id == entries[start].session_id:
            end += 1
        # Only the fields the chunker reads; the id is the position in `entries`.
        session = [
            # Deliberately partial (the chunker's fields only): building 200,000 full entries
            # would dominate the bench's set-up.
            Entry.model_construct(  # type: ignore[call-arg]
                id=i,
                speaker_name=entries[i].speaker_name,
                text=entries[i].text,
                spoken_at=entries[i].spoken_at,
            )
            for i in range(start, end)
        ]
        for passage in passages(session, DEFAULT_POLICY):
            content = passage.content
            normalised = " ".join(content.split())
            if normalised in seen:
                continue
            seen.add(normalised)
            rows = [entries[e.id] for e in passage.entries]
            chunks.append(
                ChunkRow(
                    session_id=rows[0].session_id,
                    content=content,
                    entries=tuple(e.id for e in passage.entries),
                    speaker_ids=tuple(sorted({r.speaker_id for r in rows})),
                    npc_ids=tuple(sorted({r.npc_id for r in rows if r.npc_id})),
                    entity_ids=tuple(dict.fromkeys(m for r in rows for m in r.mentions)),
                    topics=(word_pools.TOPIC_NAMES[rows[0].topic],),
                    started_at=passage.started_at,
                    ended_at=passage.ended_at,
                )
            )
            topics.append((rows[0].topic, rows[0].subtopic))
        start = end
    return tuple(chunks), tuple(topics)
