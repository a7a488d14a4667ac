"""The lore library: documents added (or updated in place), listed, read section by section,
removed; sections pinned to an NPC's hot context, or unpinned."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glyphoxa_mcp.desk.campaign_desk import CampaignDesk
from glyphoxa_mcp.domain.lore_models import AddedDocument, HeadingSummary, LoreDocument, LorePin
from glyphoxa_mcp.domain.models import Visibility
from glyphoxa_mcp.errors import NotFoundError
from glyphoxa_mcp.lore.documents import ParsedDocument
from glyphoxa_mcp.lore.references import SectionReference, resolve_heading
from glyphoxa_mcp.pipeline import lore_embedding
from glyphoxa_mcp.storage.lore_library import LoreLibrary


@dataclass(frozen=True)
class LoreDocumentDetails:
    document: LoreDocument
    headings: list[HeadingSummary]
    pins: list[LorePin]


@dataclass(frozen=True)
class Pinned:
    section: SectionReference
    """The section, its heading as stored."""
    new: bool
    """False: it was pinned to the NPC already."""


def _library(desk: CampaignDesk) -> LoreLibrary:
    return LoreLibrary(desk.db, desk.campaign_id)


async def add_lore(
    desk: CampaignDesk, documents: Sequence[ParsedDocument], visibility: Visibility
) -> list[AddedDocument]:
    """The documents, with this visibility, in one go (adding one again updates it in
    place); new or changed sections are embedded first, so a failing embedder adds none."""
    return await lore_embedding.add_lore(
        desk.db, desk.campaign_id, documents, visibility, desk.embedder()
    )


async def lore_documents(desk: CampaignDesk) -> list[LoreDocument]:
    return await _library(desk).documents()


async def lore_document(desk: CampaignDesk, document_id: str) -> LoreDocumentDetails:
    """A document with its sections' headings and the sections pinned to NPCs."""
    library = _library(desk)
    document = await library.document(document_id)
    headings = await library.heading_summaries(document.id)
    return LoreDocumentDetails(document, headings, await library.pins(document.id))


async def remove_lore(desk: CampaignDesk, document_id: str) -> LoreDocument:
    """The document with its sections, words, vectors and pins; what it was."""
    library = _library(desk)
    document = await library.document(document_id)
    await library.remove(document.id)
    return document


async def _section(library: LoreLibrary, reference: SectionReference) -> SectionReference:
    heading = resolve_heading(reference, await library.headings(reference.document_id))
    return SectionReference(reference.document_id, heading)


async def pin_lore(desk: CampaignDesk, npc_id: str, reference: SectionReference) -> Pinned:
    """The section kept in the NPC's hot context; one the NPC may not know is refused."""
    library = _library(desk)
    section = await _section(library, reference)
    return Pinned(section, await library.pin(npc_id, section.document_id, section.heading))


async def unpin_lore(
    desk: CampaignDesk, npc_id: str, reference: SectionReference
) -> SectionReference:
    """The section taken out of the NPC's hot context; NotFoundError when it was not in."""
    library = _library(desk)
    section = await _section(library, reference)
    if not await library.unpin(npc_id, section.document_id, section.heading):
        raise NotFoundError(f"{section} is not pinned to {npc_id}.")
    return section
