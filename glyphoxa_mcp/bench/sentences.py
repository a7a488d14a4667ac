"""Sentences for the synthetic campaign: templates with names and topic words. (pure)"""

from __future__ import annotations

import functools
import random
import string
from collections.abc import Sequence

from glyphoxa_mcp.bench import word_pools
from glyphoxa_mcp.bench.rows import EntityRow, Weighted
from glyphoxa_mcp.domain.vocabulary import EntityType


class NameDraws:
    """Names to put in sentences, drawn with the campaign's usual skew; within a session
    mostly from those it is about (see `within`)."""

    def __init__(self, entities: Sequence[EntityRow], rng: random.Random) -> None:
        self.rng = rng
        by_type: dict[EntityType, list[EntityRow]] = {}
        for row in entities:
            by_type.setdefault(row.type, []).append(row)
        self.by_type = {kind: Weighted(rows) for kind, rows in by_type.items()}
        self.local: dict[EntityType, Sequence[EntityRow]] = {}
        self.local_share = 0.0

    def within(self, local: dict[EntityType, Sequence[EntityRow]], share: float) -> NameDraws:
        """The same draws, but `share` of them from `local` (one session's people, places
        and things), for the kinds it has."""
        draws = NameDraws.__new__(NameDraws)
        draws.rng, draws.by_type = self.rng, self.by_type
        draws.local, draws.local_share = local, share
        return draws

    def draw(self, kind: EntityType) -> EntityRow:
        pool = self.local.get(kind)
        if pool and self.rng.random() < self.local_share:
            return self.rng.choice(pool)
        return self.by_type[kind].draw(self.rng)


def fill(
    template: str,
    rng: random.Random,
    topic: Sequence[str],
    names: NameDraws,
    *,
    subject: str | None = None,
    npcs: Sequence[EntityRow] | None = None,
    place: EntityRow | None = None,
) -> tuple[str, list[str]]:
    """The template with its blanks filled, and the ids of the entities it names."""
    named: list[str] = []

    def entity(kind: EntityType, pool: Sequence[EntityRow] | None = None) -> str:
        row = rng.choice(pool) if pool else names.draw(kind)
        named.append(row.id)
        return row.name

    out = []
    for literal, field in _parsed(template):
        out.append(literal)
        if field is None:
            continue
        if field == "w":
            out.append(rng.choice(topic))
        elif field == "npc":
            out.append(entity(EntityType.NPC, npcs))
        elif field == "place":
            if place is not None:
                named.append(place.id)
                out.append(place.name)
            else:
                out.append(entity(EntityType.LOCATION))
        elif field == "thing":
            out.append(entity(EntityType.ITEM))
        elif field == "group":
            out.append(entity(EntityType.FACTION))
        elif field == "event":
            out.append(entity(EntityType.EVENT))
        elif field == "n":
            out.append(str(rng.randint(2, 500)))
        elif field == "skill":
            out.append(rng.choice(word_pools.SKILLS))
        elif field == "subject":
            out.append(subject or "Someone")
        else:
            raise ValueError(f"unknown blank {{{field}}} in {template!r}")
    return "".join(out), named


@functools.cache
def _parsed(template: str) -> tuple[tuple[str, str | None], ...]:
    return tuple((literal, field) for literal, field, _, _ in string.Formatter().parse(template))
