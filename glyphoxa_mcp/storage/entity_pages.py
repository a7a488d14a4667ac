"""Entities a page at a time, in the order a person reads a list (by name), for the DM's desk:
a campaign of 10,000 entities is read fifty at a time, with how many there are in all."""

from __future__ import annotations

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.listings import EntityPage
from glyphoxa_mcp.domain.vocabulary import EntityType
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.storage.knowledge_graph import ENTITY_COLUMNS, entity_from_row
from glyphoxa_mcp.storage.sql_parts import Params, where

MAX_PAGE = 500


class EntityPages:
    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.campaign_id = campaign_id

    async def page(
        self,
        *,
        offset: int,
        limit: int,
        holding: str | None = None,
        type: EntityType | None = None,
    ) -> EntityPage:
        """The entities from `offset` on, by name; with `holding`, only those whose name,
        an alias or id holds it (any case)."""
        if offset < 0 or not 1 <= limit <= MAX_PAGE:
            raise InvalidInputError(
                f"A page starts at 0 or later and holds 1 to {MAX_PAGE} entities.", field="page"
            )
        params = Params(self.campaign_id)
        conditions = ["e.campaign_id = $1"]
        if type is not None:
            conditions.append(f"e.type = {params.add(EntityType(type).value)}")
        if holding is not None and holding.strip():
            # strpos rather than LIKE: the words are taken as they are, % and _ included.
            words = params.add(holding.strip().lower())
            in_alias = (
                f"EXISTS (SELECT 1 FROM unnest(e.aliases) a WHERE strpos(lower(a), {words}) > 0)"
            )
            conditions.append(
                f"(strpos(lower(e.name), {words}) > 0 OR strpos(lower(e.id), {words}) > 0 "
                f"OR {in_alias})"
            )
        filtered = where(conditions)
        count_params = list(params.values)
        rows_sql = f"""
            SELECT {ENTITY_COLUMNS} FROM entities e WHERE {filtered}
            ORDER BY e.name, e.id OFFSET {params.add(offset)} LIMIT {params.add(limit)}
        """
        with driver_errors("list entities"):
            total = await self._pool.fetchval(
                f"SELECT count(*) FROM entities e WHERE {filtered}", *count_params
            )
            rows = await self._pool.fetch(rows_sql, *params.values)
        return EntityPage(entities=tuple(entity_from_row(row) for row in rows), total=int(total))
