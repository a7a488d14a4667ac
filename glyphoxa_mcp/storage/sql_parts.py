"""Pieces of SQL shared by the stores: numbered parameters, filters, visibility (pure)."""

from __future__ import annotations

from typing import Any

from glyphoxa_mcp.domain.models import SearchFilters


class Params:
    """Collects query arguments and hands out their `$n` placeholders."""

    def __init__(self, *initial: Any) -> None:
        self.values: list[Any] = list(initial)

    def add(self, value: Any) -> str:
        self.values.append(value)
        return f"${len(self.values)}"

    def add_given(self, value: Any) -> str | None:
        """`add` for a value that is there; None (no argument) for None, whose conditions
        are left out of the statement rather than switched off by a NULL (see `knowing`)."""
        return None if value is None else self.add(value)


def or_tsquery(placeholder: str) -> str:
    """A tsquery that matches any of the query's words; ranking rewards matching more of them.

    Questions rarely share every word with the answer, so AND semantics would find nothing.
    """
    return f"replace(plainto_tsquery('english', {placeholder})::text, ' & ', ' | ')::tsquery"


def _npc_asked(filters: SearchFilters) -> str | None:
    """The NPC id the rows are filtered by: for one the reader may not know, the id with a
    space after it, which no key holds (sql/001's glyphoxa_valid_key), so that the search
    does what it does for an id no line holds, not less and not more."""
    return f"{filters.npc_id} " if filters.npc_unknown else filters.npc_id


def entry_conditions(filters: SearchFilters, params: Params, alias: str) -> list[str]:
    """WHERE conditions of `filters` for L1 session entries."""
    conditions = []
    if filters.session_id is not None:
        conditions.append(f"{alias}.session_id = {params.add(filters.session_id)}")
    if filters.speaker_ids is not None:
        speakers = params.add(list(filters.speaker_ids))
        conditions.append(f"{alias}.speaker_id = ANY({speakers}::text[])")
    if filters.npc_id is not None:
        conditions.append(f"{alias}.npc_id = {params.add(_npc_asked(filters))}")
    if filters.after is not None:
        conditions.append(f"{alias}.spoken_at >= {params.add(filters.after)}")
    if filters.before is not None:
        conditions.append(f"{alias}.spoken_at < {params.add(filters.before)}")
    return conditions + _withheld(filters, params, alias)


def chunk_conditions(filters: SearchFilters, params: Params, alias: str) -> list[str]:
    """WHERE conditions of `filters` for L2 chunks; times match chunks whose span overlaps."""
    conditions = []
    if filters.session_id is not None:
        conditions.append(f"{alias}.session_id = {params.add(filters.session_id)}")
    if filters.speaker_ids is not None:
        conditions.append(f"{alias}.speaker_ids && {params.add(list(filters.speaker_ids))}::text[]")
    if filters.npc_id is not None:
        conditions.append(f"{alias}.npc_ids @> ARRAY[{params.add(_npc_asked(filters))}::text]")
    if filters.after is not None:
        after = params.add(filters.after)
        conditions.append(f"coalesce({alias}.ended_at, {alias}.started_at) >= {after}")
    if filters.before is not None:
        conditions.append(f"{alias}.started_at < {params.add(filters.before)}")
    return conditions + _withheld(filters, params, alias)


def _withheld(filters: SearchFilters, params: Params, alias: str) -> list[str]:
    """Conditions leaving out what the viewer may not read (lines and passages alike)."""
    conditions = []
    if filters.reader is not None:
        conditions.append(may_read(alias, params.add(filters.reader)))
    if filters.withheld_sessions:
        withheld = params.add(list(filters.withheld_sessions))
        conditions.append(f"coalesce({alias}.session_id, '') <> ALL({withheld}::text[])")
    return conditions


def may_read(alias: str, reader_placeholder: str) -> str:
    """Condition: the NPC (NULL: the DM) may read the line or passage at `alias`. The rule is
    the database's (sql/032); every read of lines and passages goes through it."""
    return f"glyphoxa_may_read({alias}.dm_only, {alias}.heard_by, {reader_placeholder}::text)"


def visible(alias: str, npc_placeholder: str) -> str:
    """Condition: the row at `alias` is within the knowledge scope of the NPC (NULL: the DM)."""
    return f"glyphoxa_visible({alias}.secret, {alias}.known_by, {npc_placeholder}::text)"


def knowing(alias: str, npc_placeholder: str | None) -> list[str]:
    """Conditions: the row at `alias` is within the knowledge scope of the NPC; none for
    the DM (None). Not a condition a NULL placeholder switches off: PostgreSQL plans such a
    statement afresh at every call, which took half of a word ranking's time."""
    return [] if npc_placeholder is None else [visible(alias, npc_placeholder)]


def entity_visible(alias: str, npc_placeholder: str) -> str:
    """Like `visible`, and an NPC always knows itself."""
    return f"({visible(alias, npc_placeholder)} OR {alias}.id = {npc_placeholder}::text)"


def entity_visible_by_id(entity_id: str, campaign: str, npc_placeholder: str) -> str:
    """Condition: the entity whose id is `entity_id` (a column) is one the NPC may know,
    looked up row by row. A scalar subquery, which the planner cannot turn into a join:
    joined, it took an NPC to know 3% of the entities instead of 93%, and ranked every
    relationship exactly instead of asking the vector index (150 ms instead of 1)."""
    return f"""coalesce((
        SELECT {entity_visible("x", npc_placeholder)} FROM entities x
        WHERE x.campaign_id = {campaign} AND x.id = {entity_id}), false)"""


def where(conditions: list[str]) -> str:
    return " AND ".join(conditions) if conditions else "TRUE"
