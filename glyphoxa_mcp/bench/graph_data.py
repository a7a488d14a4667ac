"""The synthetic knowledge graph: entities, relationships and facts. (pure, seeded)"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import timedelta

from glyphoxa_mcp.bench import words
from glyphoxa_mcp.bench.rows import EntityRow, FactRow, RelationshipRow, SessionRow, Weighted
from glyphoxa_mcp.bench.sentences import NameDraws, fill
from glyphoxa_mcp.storage.vocabulary import EntityType, is_bidirectional, slugify

# Shares of the non-player entities, by type.
TYPE_SHARES = (
    (EntityType.NPC, 0.40),
    (EntityType.LOCATION, 0.14),
    (EntityType.ITEM, 0.14),
    (EntityType.FACTION, 0.04),
    (EntityType.QUEST, 0.10),
    (EntityType.EVENT, 0.10),
    (EntityType.CONCEPT, 0.08),
)
PLAYERS = 4
# How much is kept from someone: secret (maybe shared with a few NPCs), or known only to a
# few NPCs. The benchmarked NPC is among those few often, so its scope has secrets in it.
SECRET_SHARE = 0.04
RESTRICTED_SHARE = 0.05
BENCH_NPC_KNOWS = 0.3
# Links by type when filling up to the wanted count after the structural ones.
FILL_TYPES = (
    ("KNOWS", 0.45),
    ("ALLIED_WITH", 0.1),
    ("HOSTILE_TO", 0.1),
    ("EMPLOYED_BY", 0.1),
    ("CHILD_OF", 0.05),
    ("LOCATED_AT", 0.2),
)
NO_SUBJECT_SHARE = 0.1


def root_name(rng: random.Random) -> str:
    return (
        rng.choice(words.NAME_STARTS) + rng.choice(words.NAME_MIDDLES) + rng.choice(words.NAME_ENDS)
    )


def _adjective_noun(rng: random.Random, nouns: Sequence[str]) -> str:
    return f"The {rng.choice(words.ADJECTIVES)} {rng.choice(nouns)}"


NAMERS: dict[EntityType, Callable[[random.Random], str]] = {
    EntityType.NPC: lambda rng: f"{root_name(rng)} {root_name(rng)}",
    EntityType.LOCATION: lambda rng: (
        _adjective_noun(rng, words.VENUES)
        if rng.random() < 0.3
        else root_name(rng) + rng.choice(words.PLACE_SUFFIXES)
    ),
    EntityType.ITEM: lambda rng: f"{root_name(rng)}'s {rng.choice(words.OBJECTS)}",
    EntityType.FACTION: lambda rng: (
        _adjective_noun(rng, words.FACTION_NOUNS)
        if rng.random() < 0.5
        else f"{root_name(rng)} {rng.choice(words.FACTION_NOUNS)}"
    ),
    EntityType.QUEST: lambda rng: f"The {rng.choice(words.QUEST_NOUNS)} of {root_name(rng)}",
    EntityType.EVENT: lambda rng: f"The {rng.choice(words.EVENT_NOUNS)} of {root_name(rng)}",
    EntityType.CONCEPT: lambda rng: f"The {root_name(rng)} {rng.choice(words.CONCEPT_NOUNS)}",
}


def _attributes(kind: EntityType, rng: random.Random) -> dict[str, object]:
    if kind is EntityType.NPC:
        return {
            "occupation": rng.choice(words.OCCUPATIONS),
            "personality": ", ".join(rng.sample(words.PERSONALITIES, 2)),
            "speaking_style": rng.choice(words.SPEAKING_STYLES),
        }
    if kind is EntityType.QUEST:
        topic = rng.choice(words.TOPIC_NAMES)
        status = rng.choice(("active", "active", "open", "completed", "failed"))
        return {"status": status, "objective": f"settle the matter of the {topic}"}
    if kind is EntityType.LOCATION:
        topic = words.TOPICS[rng.choice(words.TOPIC_NAMES)]
        return {"description": f"known for its {rng.choice(topic)} and {rng.choice(topic)}"}
    return {"description": f"tied to the {rng.choice(words.TOPIC_NAMES)}"}


@dataclass(frozen=True)
class Graph:
    entities: tuple[EntityRow, ...]
    relationships: tuple[RelationshipRow, ...]
    bench_npc: str

    def of_type(self, kind: EntityType) -> list[EntityRow]:
        return [e for e in self.entities if e.type is kind]


class _Visibility:
    """Draws who may know a row; the NPC pool is fixed once the entities exist."""

    def __init__(self, rng: random.Random, npc_ids: Sequence[str], bench_npc: str) -> None:
        self.rng = rng
        self.npcs = list(npc_ids)
        self.bench_npc = bench_npc

    def draw(self, secret_share: float, restricted_share: float) -> tuple[bool, tuple[str, ...]]:
        roll = self.rng.random()
        if roll >= secret_share + restricted_share or not self.npcs:
            return False, ()
        secret = roll < secret_share
        knowers = set(self.rng.sample(self.npcs, min(len(self.npcs), self.rng.randint(0, 2))))
        if not secret:
            knowers.add(self.rng.choice(self.npcs))
        if self.rng.random() < BENCH_NPC_KNOWS:
            knowers.add(self.bench_npc)
        return secret, tuple(sorted(knowers))


def generate_entities(count: int, rng: random.Random) -> tuple[list[EntityRow], str]:
    """`count` entities (the party of four players first) and the id of the benchmarked NPC."""
    rows: list[EntityRow] = []
    taken_names: set[str] = set()
    taken_ids: set[str] = set()

    def add(kind: EntityType, name: str, aliases: tuple[str, ...] = ()) -> None:
        taken_names.add(name.casefold())
        entity_id = slugify(name)
        suffix = 2
        while entity_id in taken_ids:
            entity_id, suffix = f"{slugify(name)}-{suffix}", suffix + 1
        taken_ids.add(entity_id)
        rows.append(EntityRow(entity_id, kind, name, aliases, _attributes(kind, rng), False, ()))

    for position in range(PLAYERS):
        add(EntityType.PLAYER, words.PLAYER_NAMES[position])
    others = count - PLAYERS
    quotas = [(kind, max(1, round(others * share))) for kind, share in TYPE_SHARES]
    # Rounding may miss the total: the NPCs absorb the difference.
    quotas[0] = (EntityType.NPC, quotas[0][1] + others - sum(q for _, q in quotas))
    for kind, quota in quotas:
        for _ in range(quota):
            name = NAMERS[kind](rng)
            while name.casefold() in taken_names:
                name = NAMERS[kind](rng)
            add(kind, name, _aliases(kind, name, rng))
    bench_npc = next(row.id for row in rows if row.type is EntityType.NPC)
    visibility = _Visibility(
        rng, [r.id for r in rows if r.type is EntityType.NPC and r.id != bench_npc], bench_npc
    )
    with_visibility = []
    for row in rows:
        if row.type is EntityType.PLAYER or row.id == bench_npc:
            with_visibility.append(row)
            continue
        secret, known_by = visibility.draw(SECRET_SHARE, RESTRICTED_SHARE)
        with_visibility.append(
            EntityRow(row.id, row.type, row.name, row.aliases, row.attributes, secret, known_by)
        )
    return with_visibility, bench_npc


def _aliases(kind: EntityType, name: str, rng: random.Random) -> tuple[str, ...]:
    if kind is not EntityType.NPC:
        return ()
    roll = rng.random()
    if roll < 0.3:
        return (name.split()[0],)  # first names are shared: realistic ambiguity
    if roll < 0.5:
        return (f"the {rng.choice(words.OCCUPATIONS)}",)
    return ()


def generate_graph(
    entity_count: int, relationship_count: int, sessions: Sequence[SessionRow], seed: int
) -> Graph:
    rng = random.Random(f"graph:{seed}")
    entities, bench_npc = generate_entities(entity_count, rng)
    relationships = list(_relationships(entities, relationship_count, sessions, bench_npc, rng))
    return Graph(tuple(entities), tuple(relationships), bench_npc)


def provenance(rng: random.Random, session: SessionRow) -> dict[str, object]:
    if rng.random() < 0.85:
        confidence, source = 1.0, rng.choice(("dm", "stated", "import"))
    else:
        confidence, source = round(rng.uniform(0.35, 0.85), 2), "inferred"
    return {
        "session_id": session.id,
        "timestamp": session.started_at.isoformat(),
        "confidence": confidence,
        "source": source,
        "dm_confirmed": source == "dm" or rng.random() < 0.2,
    }


def _relationships(
    entities: Sequence[EntityRow],
    wanted: int,
    sessions: Sequence[SessionRow],
    bench_npc: str,
    rng: random.Random,
) -> Iterator[RelationshipRow]:
    by_type = {kind: [e.id for e in entities if e.type is kind] for kind in EntityType}
    npcs = by_type[EntityType.NPC]
    pick = {kind: Weighted(ids) for kind, ids in by_type.items() if ids}
    visibility = _Visibility(rng, [n for n in npcs if n != bench_npc], bench_npc)
    sessions_by_weight = Weighted(list(reversed(sessions)), exponent=0.3)
    seen: set[tuple[str, str, str]] = set()
    made = 0

    def link(source: str, target: str, rel_type: str) -> Iterator[RelationshipRow]:
        nonlocal made
        pair = [(source, target)]
        if is_bidirectional(rel_type):
            pair.append((target, source))
        if source == target or made + len(pair) > wanted:
            return
        if any((s, t, rel_type) in seen for s, t in pair):
            return
        secret, known_by = visibility.draw(0.04, 0.04)
        origin = provenance(rng, sessions_by_weight.draw(rng))
        for s, t in pair:
            seen.add((s, t, rel_type))
            made += 1
            yield RelationshipRow(s, t, rel_type, origin, secret, known_by)

    def structural() -> Iterator[tuple[str, str, str]]:
        # Everyone is somewhere (the hot context's scene needs it), the benchmarked NPC first.
        for npc in [bench_npc, *(n for n in npcs if n != bench_npc)]:
            yield npc, pick[EntityType.LOCATION].draw(rng), "LOCATED_AT"
        for quest in by_type[EntityType.QUEST]:
            yield pick[EntityType.NPC].draw(rng), quest, "QUEST_GIVER"
        for item in by_type[EntityType.ITEM]:
            yield pick[EntityType.NPC].draw(rng), item, "OWNS"
        for npc in npcs[::2]:
            yield npc, pick[EntityType.FACTION].draw(rng), "MEMBER_OF"
        people = Weighted(npcs + by_type[EntityType.PLAYER])
        for event in by_type[EntityType.EVENT]:
            for _ in range(rng.randint(2, 5)):
                yield people.draw(rng), event, "PARTICIPATED_IN"

    for source, target, rel_type in structural():
        yield from link(source, target, rel_type)
    fill_types = [t for t, _ in FILL_TYPES]
    fill_weights = [w for _, w in FILL_TYPES]
    attempts = 0
    while made < wanted:
        attempts += 1
        if attempts > 50 * wanted + 1000:
            raise RuntimeError(f"could not find {wanted} distinct relationships")
        rel_type = rng.choices(fill_types, fill_weights)[0]
        if wanted - made == 1 and is_bidirectional(rel_type):
            rel_type = "KNOWS"
        source = pick[EntityType.NPC].draw(rng)
        if rel_type == "LOCATED_AT":
            target = pick[EntityType.LOCATION].draw(rng)
            source = pick[EntityType.ITEM].draw(rng) if rng.random() < 0.5 else source
        elif rel_type in ("ALLIED_WITH", "HOSTILE_TO") and rng.random() < 0.3:
            source = pick[EntityType.FACTION].draw(rng)
            target = pick[EntityType.FACTION].draw(rng)
        else:
            target = pick[EntityType.NPC].draw(rng)
        yield from link(source, target, rel_type)


def generate_facts(
    count: int,
    graph: Graph,
    sessions: Sequence[SessionRow],
    seed: int,
) -> tuple[list[FactRow], list[tuple[int, int]]]:
    """Facts, and each one's (topic, sub-topic) for its embedding."""
    rng = random.Random(f"facts:{seed}")
    subjects = Weighted([e for e in graph.entities if e.type is not EntityType.PLAYER])
    names = NameDraws(graph.entities, rng)
    npcs = [e.id for e in graph.entities if e.type is EntityType.NPC]
    visibility = _Visibility(rng, [n for n in npcs if n != graph.bench_npc], graph.bench_npc)
    facts: list[FactRow] = []
    topics: list[tuple[int, int]] = []
    seen: set[tuple[str | None, str]] = set()
    while len(facts) < count:
        subject = None if rng.random() < NO_SUBJECT_SHARE else subjects.draw(rng)
        topic = rng.randrange(len(words.TOPIC_NAMES))
        subtopic = rng.randrange(words.SUBTOPICS_PER_TOPIC)
        text = fill(
            rng.choice(words.FACT_LINES),
            rng,
            words.topic_words(topic, subtopic),
            names,
            subject=subject.name if subject else "Someone",
        )[0]
        key = (subject.id if subject else None, text)
        if key in seen:
            continue
        seen.add(key)
        index = rng.randrange(len(sessions))
        session = sessions[index]
        day = 1 + 2 * index + rng.randint(0, 1)
        secret, known_by = visibility.draw(0.06, 0.06)
        facts.append(
            FactRow(
                subject_id=key[0],
                text=text,
                session_id=session.id,
                story_day=day,
                story_label=f"day {day}",
                occurred_at=session.started_at + timedelta(minutes=rng.randint(0, 200)),
                provenance=provenance(rng, session),
                secret=secret,
                known_by=known_by,
            )
        )
        topics.append((topic, subtopic))
    return facts, topics
