"""Speculative pre-fetch: the cold-layer context an NPC is about to need, fetched while the
player is still talking.

From a partial utterance: the known entities it names (with what this NPC knows of them)
and, when it names someone or reaches into the past ("do you remember..."), the passages
of past sessions it is most likely about. Always in the NPC's own knowledge scope.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from glyphoxa_mcp.correction.known_names import SHARED_CORRECTORS, CorrectorCache
from glyphoxa_mcp.errors import InvalidInputError
from glyphoxa_mcp.recall.hot_budgets import HotBudgets
from glyphoxa_mcp.recall.prefetch_triggers import temporal_reference
from glyphoxa_mcp.recall.relationship_sentences import seen_from
from glyphoxa_mcp.views.hot_context import HotLayer
from glyphoxa_mcp.views.limits import MAX_UTTERANCE as MAX_UTTERANCE  # re-exported
from glyphoxa_mcp.views.reading import Reader
from glyphoxa_mcp.views.results import EntityRef, SessionHit
from glyphoxa_mcp.views.session_search import SessionSearch

MAX_ENTITIES = 3
MAX_PASSAGES = 3
RELATIONSHIPS_EACH = 8


class PrefetchContext(BaseModel):
    npc: EntityRef
    heard: str = Field(description="The utterance as given.")
    utterance: str = Field(description="The utterance with misheard names put back.")
    temporal_reference: str | None
    entities: list[EntityRef]
    entity_context: list[str]
    passages: list[SessionHit]
    prompt: str


async def prefetch_context(
    reader: Reader,
    npc_id: str,
    utterance: str,
    *,
    correctors: CorrectorCache = SHARED_CORRECTORS,
) -> PrefetchContext:
    """What to put in the NPC's prompt before it answers `utterance`, read as that NPC knows
    it (`reader`: the NPC's own, or the DM's); a reader of another NPC is refused."""
    if len(utterance) > MAX_UTTERANCE or "\x00" in utterance:
        raise InvalidInputError(
            f"utterance must be at most {MAX_UTTERANCE} characters of text.", field="utterance"
        )
    npc = await HotLayer(reader, HotBudgets()).npc_entity(npc_id)
    as_npc = await reader.of_npc(npc.id).reading()
    scope = as_npc.scope
    # Corrected against the names this NPC may know only: correcting to a hidden name would
    # spell out a secret in the NPC's own context.
    heard = utterance
    utterance = correctors.for_entities(scope.known).correct(heard).corrected
    named = [i for i in scope.mentions.owners_in(utterance) if i != npc.id]
    withheld = await as_npc.withheld_sessions()
    read = await reader.memory.queries.snapshots(
        named[:MAX_ENTITIES], npc_id=npc.id, max_relationships=RELATIONSHIPS_EACH
    )
    snapshots = [s for s in (scope.shown_snapshot(r, withheld) for r in read) if s is not None]
    context = []
    for snapshot in snapshots:
        entity = snapshot.entity
        attributes = scope.redactor.clean(entity.attributes)
        parts = [f"{k.replace('_', ' ')}: {v}" for k, v in attributes.items()]
        parts += [seen_from(entity.name, r) for r in snapshot.relationships]
        parts += [f.text for f in snapshot.facts]
        context.append(f"{entity.name} ({entity.type.value}): " + " ".join(parts))
    temporal = temporal_reference(utterance)
    passages: list[SessionHit] = []
    if utterance.strip() and (temporal or named) and reader.embedder is not None:
        filters = as_npc.transcript_filters(withheld)
        passages = await SessionSearch(as_npc, filters).run(utterance.strip(), MAX_PASSAGES)
    lines = ["## Memory this conversation may need"]
    lines += [f"- {line}" for line in context]
    if passages:
        lines.append("Earlier sessions:")
        lines += [f"[{hit.session_title or hit.session_id}]\n{hit.text}" for hit in passages]
    return PrefetchContext(
        npc=EntityRef(id=npc.id, name=npc.name, type=npc.type.value),
        heard=heard,
        utterance=utterance,
        temporal_reference=temporal,
        entities=[
            EntityRef(id=s.entity.id, name=s.entity.name, type=s.entity.type.value)
            for s in snapshots
        ],
        entity_context=context,
        passages=passages,
        prompt="\n".join(lines) if len(lines) > 1 else "",
    )
