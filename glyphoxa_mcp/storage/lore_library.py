"""The lore library of one campaign: documents, their sections with vectors, and the sections
pinned to NPCs (sql/028). Adding a document again updates it in place; searches are in
`lore_queries`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import asyncpg

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.db.driver_errors import driver_errors
from glyphoxa_mcp.domain.lore_models import (
    AddedDocument,
    HeadingSummary,
    LoreDocument,
    LorePin,
    LoreSourceKind,
)
from glyphoxa_mcp.domain.models import Frozen, Visibility, checked_embedding
from glyphoxa_mcp.errors import ConflictError, InvalidInputError, NotFoundError

SELECT_DOCUMENTS = """
SELECT d.id, d.title, d.source_kind, d.source_name, d.checksum, d.secret, d.known_by,
       d.updated_at,
       (SELECT count(*) FROM lore_sections s
        WHERE s.campaign_id = d.campaign_id AND s.document_id = d.id) AS sections,
       (SELECT count(*) FROM lore_pins p
        WHERE p.campaign_id = d.campaign_id AND p.document_id = d.id) AS pins
FROM lore_documents d
WHERE d.campaign_id = $1 AND ($2::text IS NULL OR d.id = $2)
ORDER BY d.id
"""
LOCK_DOCUMENT = """
SELECT d.checksum, d.secret, d.known_by FROM lore_documents d
WHERE d.campaign_id = $1 AND d.id = $2
FOR UPDATE
"""
UPSERT_DOCUMENT = """
INSERT INTO lore_documents AS d
    (campaign_id, id, title, source_kind, source_name, checksum, secret, known_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (campaign_id, id) DO UPDATE SET
    title = EXCLUDED.title, source_kind = EXCLUDED.source_kind,
    source_name = EXCLUDED.source_name, checksum = EXCLUDED.checksum,
    secret = EXCLUDED.secret, known_by = EXCLUDED.known_by, updated_at = now()
"""
SET_VISIBILITY = """
UPDATE lore_documents SET secret = $3, known_by = $4, updated_at = now()
WHERE campaign_id = $1 AND id = $2
"""
DELETE_SECTIONS = "DELETE FROM lore_sections WHERE campaign_id = $1 AND document_id = $2"
# A document's sections arrive together: one COPY into a staging table and one INSERT, so
# the word postings' triggers (sql/024) run once for the document, not once a section.
CREATE_INCOMING = """
CREATE TEMP TABLE incoming_lore_sections (
    document_id text, ordinal integer, heading text, text text, embedding vector
) ON COMMIT DROP
"""
COPY_COLUMNS = ["document_id", "ordinal", "heading", "text", "embedding"]
INSERT_INCOMING = """
INSERT INTO lore_sections (campaign_id, document_id, ordinal, heading, text, embedding)
SELECT $1, document_id, ordinal, heading, text, embedding
FROM incoming_lore_sections ORDER BY document_id, ordinal
"""
# Pins whose heading is gone from their document, or whose NPC may no longer read it.
PRUNE_PINS = """
DELETE FROM lore_pins p
WHERE p.campaign_id = $1 AND p.document_id = ANY($2::text[])
  AND NOT EXISTS (
      SELECT FROM lore_sections s
      WHERE s.campaign_id = p.campaign_id AND s.document_id = p.document_id
        AND s.heading = p.heading
        AND glyphoxa_visible(s.secret, s.known_by, p.npc_id))
RETURNING p.npc_id, p.document_id, p.heading, p.pinned_at
"""
DELETE_DOCUMENT = "DELETE FROM lore_documents WHERE campaign_id = $1 AND id = $2 RETURNING id"
SELECT_HEADING_COUNTS = """
SELECT s.heading, count(*) AS pieces, sum(length(s.text)) AS characters
FROM lore_sections s
WHERE s.campaign_id = $1 AND s.document_id = $2
GROUP BY s.heading ORDER BY min(s.ordinal)
"""
SHARE_DOCUMENT = """
SELECT glyphoxa_visible(d.secret, d.known_by, $3::text) AS visible,
       EXISTS (SELECT FROM lore_sections s
               WHERE s.campaign_id = d.campaign_id AND s.document_id = d.id
                 AND s.heading = $4) AS has_heading
FROM lore_documents d
WHERE d.campaign_id = $1 AND d.id = $2
FOR SHARE
"""
INSERT_PIN = """
INSERT INTO lore_pins (campaign_id, npc_id, document_id, heading) VALUES ($1, $2, $3, $4)
ON CONFLICT (campaign_id, npc_id, document_id, heading) DO NOTHING
RETURNING npc_id
"""
DELETE_PIN = """
DELETE FROM lore_pins
WHERE campaign_id = $1 AND npc_id = $2 AND document_id = $3 AND heading = $4
RETURNING npc_id
"""
SELECT_PINS = """
SELECT p.npc_id, p.document_id, p.heading, p.pinned_at FROM lore_pins p
WHERE p.campaign_id = $1 AND ($2::text IS NULL OR p.document_id = $2)
ORDER BY p.document_id, p.npc_id, p.pinned_at
"""


class NewLoreSection(Frozen):
    heading: str
    text: str
    embedding: list[float]


class NewLoreDocument(Frozen):
    """A document to add. `sections` is None for one whose text is stored already (the
    same checksum): it is not embedded again."""

    id: str
    title: str
    source_kind: LoreSourceKind
    source_name: str
    checksum: str
    visibility: Visibility
    sections: tuple[NewLoreSection, ...] | None


class StoredDocument(Frozen):
    checksum: str
    visibility: Visibility


def _visibility(row: asyncpg.Record) -> Visibility:
    return Visibility(secret=row["secret"], known_by=tuple(row["known_by"]))


def _pin(row: asyncpg.Record) -> LorePin:
    return LorePin(**dict(row))


class LoreLibrary:
    """The lore documents of one campaign."""

    def __init__(self, db: Database, campaign_id: str) -> None:
        self._pool = db.pool
        self.dimension = db.embedding_dim
        self.campaign_id = campaign_id

    async def documents(self, document_id: str | None = None) -> list[LoreDocument]:
        """Every document (or the one named), by id, with its section and pin counts."""
        with driver_errors("list the lore documents"):
            rows = await self._pool.fetch(SELECT_DOCUMENTS, self.campaign_id, document_id)
        return [
            LoreDocument(
                id=row["id"],
                title=row["title"],
                source_kind=row["source_kind"],
                source_name=row["source_name"],
                checksum=row["checksum"],
                visibility=_visibility(row),
                sections=row["sections"],
                pins=row["pins"],
                updated_at=row["updated_at"],
            )
            for row in rows
        ]

    async def document(self, document_id: str) -> LoreDocument:
        found = await self.documents(document_id)
        if not found:
            raise self._missing(document_id)
        return found[0]

    def _missing(self, document_id: str) -> NotFoundError:
        return NotFoundError(
            f"No lore document {document_id!r} in campaign {self.campaign_id!r}; "
            "`glyphoxa-mcp lore list` shows them."
        )

    async def stored(self, document_ids: Sequence[str]) -> dict[str, StoredDocument]:
        """The checksum and visibility of those of the documents that are stored."""
        with driver_errors("read the lore documents"):
            rows = await self._pool.fetch(
                "SELECT d.id, d.checksum, d.secret, d.known_by FROM lore_documents d"
                " WHERE d.campaign_id = $1 AND d.id = ANY($2::text[])",
                self.campaign_id,
                list(document_ids),
            )
        return {
            row["id"]: StoredDocument(checksum=row["checksum"], visibility=_visibility(row))
            for row in rows
        }

    async def add(self, documents: Sequence[NewLoreDocument]) -> list[AddedDocument]:
        """Store the documents, all or none: each new one added, one whose text changed
        replaced (sections, words and vectors), one whose visibility changed updated, the
        rest left as they are. Pins that no longer hold (their heading gone, or their NPC no
        longer allowed to read it) are dropped and returned."""
        ids = [document.id for document in documents]
        if len(set(ids)) < len(ids):
            raise InvalidInputError("A lore document may be added once in one addition.")
        records: list[tuple[str, int, str, str, list[float]]] = []
        actions: dict[str, AddedDocument] = {}
        with driver_errors("add the lore documents"):
            async with self._pool.acquire() as conn, conn.transaction():
                for document in documents:
                    action = await self._write_document(conn, document)
                    actions[document.id] = AddedDocument(id=document.id, action=action)
                    if action in ("added", "updated") and document.sections is not None:
                        records += [
                            (
                                document.id,
                                ordinal,
                                section.heading,
                                section.text,
                                checked_embedding(section.embedding, self.dimension),
                            )
                            for ordinal, section in enumerate(document.sections)
                        ]
                if records:
                    await conn.execute(CREATE_INCOMING)
                    await conn.copy_records_to_table(
                        "incoming_lore_sections", records=records, columns=COPY_COLUMNS
                    )
                    await conn.execute(INSERT_INCOMING, self.campaign_id)
                    await conn.execute("DROP TABLE incoming_lore_sections")
                pruned = [_pin(row) for row in await conn.fetch(PRUNE_PINS, self.campaign_id, ids)]
        return [
            added.model_copy(
                update={"pins_dropped": tuple(p for p in pruned if p.document_id == added.id)}
            )
            for added in actions.values()
        ]

    async def _write_document(
        self, conn: asyncpg.Connection, document: NewLoreDocument
    ) -> Literal["added", "updated", "unchanged", "visibility changed"]:
        visibility = document.visibility
        row = await conn.fetchrow(LOCK_DOCUMENT, self.campaign_id, document.id)
        if row is not None and row["checksum"] == document.checksum:
            if _visibility(row) == visibility:
                return "unchanged"
            await conn.execute(
                SET_VISIBILITY,
                self.campaign_id,
                document.id,
                visibility.secret,
                list(visibility.known_by),
            )
            return "visibility changed"
        if document.sections is None:
            raise ConflictError(
                f"Lore document {document.id!r} changed while it was being added; add it again."
            )
        await conn.execute(
            UPSERT_DOCUMENT,
            self.campaign_id,
            document.id,
            document.title,
            document.source_kind,
            document.source_name,
            document.checksum,
            visibility.secret,
            list(visibility.known_by),
        )
        if row is None:
            return "added"
        await conn.execute(DELETE_SECTIONS, self.campaign_id, document.id)
        return "updated"

    async def remove(self, document_id: str) -> None:
        """Remove the document with its sections, their words and vectors, and its pins."""
        with driver_errors(f"remove lore document {document_id!r}"):
            removed = await self._pool.fetchval(DELETE_DOCUMENT, self.campaign_id, document_id)
        if removed is None:
            raise self._missing(document_id)

    async def headings(self, document_id: str) -> list[str]:
        """The document's heading paths, in the document's order."""
        return [summary.heading for summary in await self.heading_summaries(document_id)]

    async def heading_summaries(self, document_id: str) -> list[HeadingSummary]:
        """The document's sections, in its order (a document has one at least)."""
        with driver_errors(f"read the sections of lore document {document_id!r}"):
            rows = await self._pool.fetch(SELECT_HEADING_COUNTS, self.campaign_id, document_id)
        if not rows:
            raise self._missing(document_id)
        return [HeadingSummary(**dict(row)) for row in rows]

    async def pin(self, npc_id: str, document_id: str, heading: str) -> bool:
        """Pin the section to the NPC's hot context; False when it was pinned already.
        Pinning tells the NPC nothing it may not know: a section it may not read is refused."""
        with driver_errors(f"pin lore to {npc_id!r}"):
            async with self._pool.acquire() as conn, conn.transaction():
                row = await conn.fetchrow(
                    SHARE_DOCUMENT, self.campaign_id, document_id, npc_id, heading
                )
                if row is None:
                    raise self._missing(document_id)
                if not row["has_heading"]:
                    raise NotFoundError(
                        f"Lore document {document_id!r} has no section {heading!r}."
                    )
                if not row["visible"]:
                    raise InvalidInputError(
                        f"{npc_id!r} may not know lore document {document_id!r} (it is secret, "
                        "or known to other NPCs), and pinning tells no secret. Add the "
                        f"document again with --known-by {npc_id} first."
                    )
                added = await conn.fetchval(
                    INSERT_PIN, self.campaign_id, npc_id, document_id, heading
                )
        return added is not None

    async def unpin(self, npc_id: str, document_id: str, heading: str) -> bool:
        """Unpin the section; False when it was not pinned to the NPC."""
        with driver_errors(f"unpin lore from {npc_id!r}"):
            removed = await self._pool.fetchval(
                DELETE_PIN, self.campaign_id, npc_id, document_id, heading
            )
        return removed is not None

    async def pins(self, document_id: str | None = None) -> list[LorePin]:
        with driver_errors("list the lore pins"):
            rows = await self._pool.fetch(SELECT_PINS, self.campaign_id, document_id)
        return [_pin(row) for row in rows]
