"""The synthetic knowledge graph: entities, relationships and facts. (pure, seeded)"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta

from glyphoxa_mcp.bench import word_pools
from glyphoxa_mcp.bench.rows import EntityRow, FactRow, RelationshipRow, SessionRow, Weighted
from glyphoxa_mcp.bench.sentences import NameDraws, fill
from glyphoxa_mcp.domain.vocabulary import EntityType, is_bidirectional, slugify

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
# Where the benchmarked NPC is among the NPCs by how often they come up (1 is the most).
BENCH_NPC_RANK = 8
# Its companion, the next in rank: told every secret it is told, and present in every scene,
# so that what the companion reads is what the benchmarked NPC would read if every NPC heard
# every line (bench/dataset.py).
COMPANION_RANK = BENCH_NPC_RANK + 1
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
# Facts about someone not involved in the session they were learnt in.
ELSEWHERE_SHARE = 0.05
# Of the relationships beyond the prepared structure, those learnt in play (about 20 per
# session at reference scale; the rest the DM set down), and how many of those are inferred
# rather than stated.
PLAYED_SHARE = 0.17
INFERRED_SHARE = 0.2
PREPARED_AT = datetime(2024, 1, 1, tzinfo=UTC)
LINK_SKEW = 0.6


def root_name(rng: random.Random) -> str:
    return (
        rng.choice(word_pools.NAME_STARTS)
        + rng.choice(word_pools.NAME_MIDDLES)
        + rng.choice(word_pools.NAME_ENDS)
    )


def _adjective_noun(rng: random.Random, nouns: Sequence[str]) -> str:
    return f"The {rng.choice(word_pools.ADJECTIVES)} {rng.choice(nouns)}"


NAMERS: dict[EntityType, Callable[[random.Random], str]] = {
    EntityType.NPC: lambda rng: f"{root_name(rng)} {root_name(rng)}",
    EntityType.LOCATION: lambda rng: (
        _adjective_noun(rng, word_pools.VENUES)
        if rng.random() < 0.3
        else root_name(rng) + rng.choice(word_pools.PLACE_SUFFIXES)
    ),
    EntityType.ITEM: lambda rng: f"{root_name(rng)}'s {rng.choice(word_pools.OBJECTS)}",
    EntityType.FACTION: lambda rng: (
        _adjective_noun(rng, word_pools.FACTION_NOUNS)
        if rng.random() < 0.5
        else f"{root_name(rng)} {rng.choice(word_pools.FACTION_NOUNS)}"
    ),
    EntityType.QUEST: lambda rng: f"The {rng.choice(word_pools.QUEST_NOUNS)} of {root_name(rng)}",
    EntityType.EVENT: lambda rng: f"The {rng.choice(word_pools.EVENT_NOUNS)} of {root_name(rng)}",
    EntityType.CONCEPT: lambda rng: f"The {root_name(rng)} {rng.choice(word_pools.CONCEPT_NOUNS)}",
}


def _attributes(kind: EntityType, rng: random.Random) -> dict[str, object]:
    if kind is EntityType.NPC:
        return {
            "occupation": rng.choice(word_pools.OCCUPATIONS),
            "personality": ", ".join(rng.sample(word_pools.PERSONALITIES, 2)),
            "speaking_style": rng.choice(word_pools.SPEAKING_STYLES),
        }
    if kind is EntityType.QUEST:
        topic = rng.choice(word_pools.TOPIC_NAMES)
        status = rng.choice(("active", "active", "open", "completed", "failed"))
        return {"status": status, "objective": f"settle the matter of the {topic}"}
    if kind is EntityType.LOCATION:
        features = word_pools.TOPICS[rng.choice(word_pools.TOPIC_NAMES)]
        return {"description": f"known for its {rng.choice(features)} and {rng.choice(features)}"}
    return {"description": f"tied to the {rng.choice(word_pools.TOPIC_NAMES)}"}


class _Visibility:
    """Draws who may know a row; the NPC pool is fixed once the entities exist. The measured
    NPCs (the benchmarked one and its companion) are told together, and are never drawn
    alone."""

    def __init__(self, rng: random.Random, npc_ids: Sequence[str], bench_npc: str) -> None:
        self.rng = rng
        companion = companion_npc(npc_ids)
        self.measured = {bench_npc} if companion is None else {bench_npc, companion}
        self.npcs = [n for n in npc_ids if n not in self.measured]

    def draw(self, secret_share: float, restricted_share: float) -> tuple[bool, tuple[str, ...]]:
        roll = self.rng.random()
        if roll >= secret_share + restricted_share or not self.npcs:
            return False, ()
        secret = roll < secret_share
        knowers = set(self.rng.sample(self.npcs, min(len(self.npcs), self.rng.randint(0, 2))))
        if not secret:
            knowers.add(self.rng.choice(self.npcs))
        if self.rng.random() < BENCH_NPC_KNOWS:
            knowers |= self.measured
        return secret, tuple(sorted(knowers))


def companion_npc(npc_ids: Sequence[str]) -> str | None:
    """The benchmarked NPC's companion among the NPCs (by how often they come up); None in a
    campaign with too few NPCs to have one."""
    return npc_ids[COMPANION_RANK - 1] if len(npc_ids) >= COMPANION_RANK else None


def generate_entities(count: int, seed: int) -> tuple[list[EntityRow], str]:
    """`count` entities (the party of four players first) and the id of the benchmarked NPC."""
    rng = random.Random(f"entities:{seed}")
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
        add(EntityType.PLAYER, word_pools.PLAYER_NAMES[position])
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
    # A recurring NPC of some standing, not the campaign's most connected hub.
    npcs = [row.id for row in rows if row.type is EntityType.NPC]
    bench_npc = npcs[min(BENCH_NPC_RANK, len(npcs)) - 1]
    visibility = _Visibility(rng, npcs, bench_npc)
    with_visibility = []
    for row in rows:
        if row.type is EntityType.PLAYER or row.id in visibility.measured:
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
        return (f"the {rng.choice(word_pools.OCCUPATIONS)}",)
    return ()


def provenance(rng: random.Random, session: SessionRow | None) -> dict[str, object]:
    """Learnt in play (stated, or inferred and less sure) in `session`, or set down by the
    DM while preparing (no session)."""
    if session is None:
        return {
            "session_id": None,
            "timestamp": PREPARED_AT.isoformat(),
            "confidence": 1.0,
            "source": rng.choice(("dm", "import")),
            "dm_confirmed": True,
        }
    inferred = rng.random() < INFERRED_SHARE
    return {
        "session_id": session.id,
        "timestamp": session.started_at.isoformat(),
        "confidence": round(rng.uniform(0.35, 0.85), 2) if inferred else 1.0,
        "source": "inferred" if inferred else "stated",
        "dm_confirmed": rng.random() < 0.2,
    }


def generate_relationships(
    entities: Sequence[EntityRow],
    count: int,
    sessions: Sequence[SessionRow],
    involved: dict[str, tuple[str, ...]],
    bench_npc: str,
    seed: int,
) -> list[RelationshipRow]:
    """`count` relationship rows (a bidirectional type counts twice: it is stored both ways):
    the structure the DM prepared (everyone somewhere, quests given, items owned...), then
    links learnt in play between those involved in one session, or set down by the DM."""
    return list(_Linker(entities, sessions, involved, bench_npc, seed).links(count))


class _Linker:
    def __init__(
        self,
        entities: Sequence[EntityRow],
        sessions: Sequence[SessionRow],
        involved: dict[str, tuple[str, ...]],
        bench_npc: str,
        seed: int,
    ) -> None:
        self.rng = random.Random(f"relationships:{seed}")
        self.bench_npc = bench_npc
        self.by_type = {kind: [e.id for e in entities if e.type is kind] for kind in EntityType}
        # Flatter than who comes up in talk: a few hubs, but no one related to everyone.
        self.pick = {
            kind: Weighted(ids, exponent=LINK_SKEW) for kind, ids in self.by_type.items() if ids
        }
        npcs = self.by_type[EntityType.NPC]
        self.visibility = _Visibility(self.rng, npcs, bench_npc)
        self.sessions = {s.id: s for s in sessions}
        kinds = {e.id: e.type for e in entities}
        # Per session, who and what was involved, by type.
        self.there: dict[str, dict[EntityType, list[str]]] = {}
        for session_id, ids in involved.items():
            for entity_id in ids:
                typed = self.there.setdefault(session_id, {})
                typed.setdefault(kinds[entity_id], []).append(entity_id)
        self.seen: set[tuple[str, str, str]] = set()
        self.made = 0

    def draw(self, kind: EntityType, session: str | None) -> str:
        local = self.there.get(session, {}).get(kind) if session else None
        return self.rng.choice(local) if local else self.pick[kind].draw(self.rng)

    def link(
        self, source: str, target: str, rel_type: str, session: str | None, wanted: int
    ) -> Iterator[RelationshipRow]:
        pair = [(source, target)]
        if is_bidirectional(rel_type):
            pair.append((target, source))
        if source == target or self.made + len(pair) > wanted:
            return
        if any((s, t, rel_type) in self.seen for s, t in pair):
            return
        secret, known_by = self.visibility.draw(0.04, 0.04)
        there = {i for ids in self.there.get(session, {}).values() for i in ids} if session else ()
        played = session is not None and source in there and target in there
        learnt = provenance(self.rng, self.sessions[session] if played and session else None)
        for s, t in pair:
            self.seen.add((s, t, rel_type))
            self.made += 1
            yield RelationshipRow(s, t, rel_type, learnt, secret, known_by)

    def prepared(self) -> Iterator[tuple[str, str, str]]:
        rng, pick, by_type = self.rng, self.pick, self.by_type
        npcs = by_type[EntityType.NPC]
        # Everyone is somewhere (the hot context's scene needs it), the benchmarked NPC first.
        for npc in [self.bench_npc, *(n for n in npcs if n != self.bench_npc)]:
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

    def links(self, wanted: int) -> Iterator[RelationshipRow]:
        rng = self.rng
        for source, target, rel_type in self.prepared():
            yield from self.link(source, target, rel_type, None, wanted)
        fill_types = [t for t, _ in FILL_TYPES]
        fill_weights = [w for _, w in FILL_TYPES]
        session_ids = sorted(self.there)
        attempts = 0
        while self.made < wanted:
            attempts += 1
            if attempts > 50 * wanted + 1000:
                raise RuntimeError(f"could not find {wanted} distinct relationships")
            session = (
                rng.choice(session_ids) if session_ids and rng.random() < PLAYED_SHARE else None
            )
            rel_type = rng.choices(fill_types, fill_weights)[0]
            if wanted - self.made == 1 and is_bidirectional(rel_type):
                rel_type = "KNOWS"
            source = self.draw(EntityType.NPC, session)
            if rel_type == "LOCATED_AT":
                target = self.draw(EntityType.LOCATION, session)
                if rng.random() < 0.5:
                    source = self.draw(EntityType.ITEM, session)
            elif rel_type in ("ALLIED_WITH", "HOSTILE_TO") and rng.random() < 0.3:
                source = self.draw(EntityType.FACTION, session)
                target = self.draw(EntityType.FACTION, session)
            else:
                target = self.draw(EntityType.NPC, session)
            yield from self.link(source, target, rel_type, session, wanted)


def generate_facts(
    count: int,
    entities: Sequence[EntityRow],
    sessions: Sequence[SessionRow],
    involved: dict[str, tuple[str, ...]],
    bench_npc: str,
    seed: int,
) -> tuple[list[FactRow], list[tuple[int, int]]]:
    """Facts learnt in the sessions, mostly about who and what was involved there; and each
    one's (topic, sub-topic) for its embedding."""
    rng = random.Random(f"facts:{seed}")
    by_id = {e.id: e for e in entities}
    anything = Weighted([e for e in entities if e.type is not EntityType.PLAYER])
    names = NameDraws(entities, rng)
    npcs = [e.id for e in entities if e.type is EntityType.NPC]
    visibility = _Visibility(rng, npcs, bench_npc)
    facts: list[FactRow] = []
    topics: list[tuple[int, int]] = []
    seen: set[tuple[str | None, str]] = set()
    while len(facts) < count:
        index = rng.randrange(len(sessions))
        session = sessions[index]
        there = [
            by_id[i] for i in involved.get(session.id, ()) if by_id[i].type is not EntityType.PLAYER
        ]
        roll = rng.random()
        if roll < NO_SUBJECT_SHARE:
            subject = None
        elif there and roll < 1 - ELSEWHERE_SHARE:
            subject = rng.choice(there)
        else:
            subject = anything.draw(rng)
        topic = rng.randrange(len(word_pools.TOPIC_NAMES))
        subtopic = rng.randrange(word_pools.SUBTOPICS_PER_TOPIC)
        text = fill(
            rng.choice(word_pools.FACT_LINES),
            rng,
            word_pools.topic_words(topic, subtopic),
            names,
            subject=subject.name if subject else "Someone",
        )[0]
        key = (subject.id if subject else None, text)
        if key in seen:
            continue
        seen.add(key)
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
