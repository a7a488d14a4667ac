"""The lore library as the DM sees it: its documents, their sections' headings, the sections
pinned to NPCs, and what adding documents did. (pure)"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from glyphoxa_mcp.domain.models import Frozen, Visibility

LoreSourceKind = Literal["markdown", "text", "foundry"]


class LoreDocument(Frozen):
    id: str
    title: str
    source_kind: LoreSourceKind
    source_name: str
    checksum: str
    visibility: Visibility
    sections: int
    pins: int
    updated_at: datetime


class LorePin(Frozen):
    npc_id: str
    document_id: str
    heading: str
    pinned_at: datetime


class HeadingSummary(Frozen):
    """A section of a document: its heading, in how many pieces, of how many characters."""

    heading: str
    pieces: int
    characters: int


class AddedDocument(Frozen):
    id: str
    action: Literal["added", "updated", "unchanged", "visibility changed"]
    pins_dropped: tuple[LorePin, ...] = ()
