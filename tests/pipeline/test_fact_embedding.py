"""Facts get a vector on every write path, and the backfill gives one to those that have not."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import bundled
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewEntity, NewEntry, NewFact, NewSession, Provenance
from glyphoxa_mcp.domain.reports import Embedded
from glyphoxa_mcp.errors import ProviderError
from glyphoxa_mcp.pipeline.extraction import extract_session
from glyphoxa_mcp.pipeline.fact_embedding import embed_missing, embed_new
from glyphoxa_mcp.providers.chat import ChatModel, ChatSettings
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.storage.fact_vectors import FactVectors, RelationshipVectors
from glyphoxa_mcp.storage.memory import CampaignMemory
from tests.providers.fake_openai import chat, serve
from tests.storage.graph_fixtures import build_village

SAMPLE_FACTS = 9
SAMPLE_LINKS = 28  # the file's 26 relationships, ALLIED_WITH and HOSTILE_TO stored both ways


class FailingAfter:
    """An embedder that answers `calls` times and then is unreachable, as a remote one can be."""

    def __init__(self, inner: LocalMiniLMEmbedder, calls: int = 0) -> None:
        self.inner = inner
        self.calls_left = calls

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.calls_left <= 0:
            raise ProviderError("The embedder is unreachable.")
        self.calls_left -= 1
        return await self.inner.embed(texts)


async def vectors(db: Database) -> dict[str, list[float] | None]:
    """Each current fact's text and its vector (None: none yet)."""
    rows = await db.pool.fetch(
        "SELECT text, embedding FROM facts WHERE superseded_by IS NULL ORDER BY id"
    )
    return {r["text"]: (None if r["embedding"] is None else r["embedding"].to_list()) for r in rows}


async def load_sample(db: Database, embedder: object | None) -> None:
    file = parse_campaign_file(bundled("campaign.yaml"), "campaign.yaml")
    await load_campaign(db, file, "demo", embedder=embedder)  # type: ignore[arg-type]


@pytest.mark.slow
async def test_loading_a_campaign_embeds_its_facts(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await load_sample(db384, offline_embedder)
    stored = await vectors(db384)
    assert len(stored) == SAMPLE_FACTS
    assert all(v is not None for v in stored.values())
    text = "Old Berrit sells salt-fish on the quay every dawn."
    (expected,) = await offline_embedder.embed([text])
    assert stored[text] == pytest.approx(expected, abs=1e-6)


@pytest.mark.slow
async def test_facts_written_while_the_embedder_is_down_are_kept_and_the_backfill_embeds_them(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await load_sample(db384, FailingAfter(offline_embedder))
    stored = await vectors(db384)
    assert len(stored) == SAMPLE_FACTS and all(v is None for v in stored.values())
    assert await FactVectors(db384).count_missing() == SAMPLE_FACTS

    assert await embed_missing(db384, offline_embedder) == Embedded(SAMPLE_FACTS, SAMPLE_LINKS)
    filled = await vectors(db384)
    assert all(v is not None for v in filled.values())
    # Again: nothing to do, nothing changed.
    assert await embed_missing(db384, offline_embedder) == Embedded()
    assert await vectors(db384) == filled


@pytest.mark.slow
async def test_a_backfill_cut_short_keeps_its_committed_batches_and_resumes(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await load_sample(db384, None)
    with pytest.raises(ProviderError):
        await embed_missing(db384, FailingAfter(offline_embedder, calls=2), batch=2)
    assert await FactVectors(db384).count_missing() == SAMPLE_FACTS - 4
    resumed = await embed_missing(db384, offline_embedder, batch=2)
    assert resumed == Embedded(SAMPLE_FACTS - 4, SAMPLE_LINKS)
    assert await FactVectors(db384).count_missing() == 0
    assert await RelationshipVectors(db384).count_missing() == 0


@pytest.mark.slow
async def test_the_backfill_keeps_to_the_campaign_it_is_given(
    db384: Database, semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await load_sample(db384, None)
    await build_village(semantic_memory)
    in_village = await FactVectors(db384, "ashfall").count_missing()
    assert in_village > 0
    embedded = await embed_missing(db384, offline_embedder, "demo")
    assert embedded == Embedded(SAMPLE_FACTS, SAMPLE_LINKS)
    assert await FactVectors(db384, "ashfall").count_missing() == in_village
    assert await FactVectors(db384).count_missing() == in_village


@pytest.mark.slow
async def test_a_retconned_fact_is_embedded_under_its_new_text(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await load_sample(db384, offline_embedder)
    memory = CampaignMemory(db384, "demo")
    (berrit,) = await memory.graph.facts_about("berrit")
    new = await memory.curation.retcon(berrit.id, "Old Berrit mends nets by the lighthouse.")
    assert (await vectors(db384))[new.text] is None  # written first: the write never waits
    assert await embed_new(db384, offline_embedder, "demo") == Embedded(facts=1)
    (expected,) = await offline_embedder.embed([new.text])
    assert (await vectors(db384))[new.text] == pytest.approx(expected, abs=1e-6)


async def test_embedding_new_facts_without_an_embedder_or_with_one_down_keeps_them(
    db384: Database, semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await build_village(semantic_memory)
    await semantic_memory.graph.upsert_fact(
        NewFact(subject_id="grimjaw", text="Grimjaw hums while he works.", provenance=Provenance())
    )
    missing = await FactVectors(db384, "ashfall").count_missing()
    assert await embed_new(db384, None, "ashfall") == Embedded()
    assert await embed_new(db384, FailingAfter(offline_embedder), "ashfall") == Embedded()
    assert await FactVectors(db384, "ashfall").count_missing() == missing
    assert "Grimjaw hums while he works." in await vectors(db384)


@pytest.mark.slow
async def test_extraction_embeds_the_facts_it_stores(
    db384: Database, semantic_memory: CampaignMemory, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await build_village(semantic_memory)
    await embed_missing(db384, offline_embedder)
    await semantic_memory.sessions.upsert(NewSession(id="s2"))
    await semantic_memory.log.append_many(
        "s2",
        [
            NewEntry(
                speaker_id="gm",
                speaker_name="DM",
                text="Grimjaw sings at the forge.",
                spoken_at=datetime(2026, 3, 2, 19, tzinfo=UTC),
            )
        ],
    )
    said = {
        "entities": [],
        "relationships": [],
        "facts": [
            {
                "subject": "Grimjaw",
                "text": "Grimjaw sings old war songs at his forge.",
                "confidence": 0.9,
                "basis": "stated",
            }
        ],
    }
    entries = await semantic_memory.log.unextracted("s2")
    with serve(chat(json.dumps(said))) as fake:
        model = ChatModel(ChatSettings(base_url=fake.base_url, model="m"))
        report = await extract_session(
            semantic_memory, model, "s2", entries, 0.7, embedder=offline_embedder
        )
    assert report.facts == 1
    assert (await vectors(db384))["Grimjaw sings old war songs at his forge."] is not None
    assert await FactVectors(db384).count_missing() == 0


@pytest.mark.slow
async def test_a_renamed_entity_s_relationships_are_embedded_again_under_the_new_name(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await load_sample(db384, offline_embedder)
    memory = CampaignMemory(db384, "demo")
    assert await RelationshipVectors(db384).count_missing() == 0
    dovrek = await memory.graph.get_entity("dovrek")
    await memory.graph.upsert_entity(
        NewEntity(id=dovrek.id, type=dovrek.type, name="Dovrek the Quiet")
    )
    # Its two relationships read differently now; the others keep their vectors.
    assert await RelationshipVectors(db384).count_missing() == 2
    assert await embed_new(db384, offline_embedder, "demo") == Embedded(relationships=2)
    stored = await db384.pool.fetchval(
        "SELECT embedding FROM relationships "
        "WHERE source_id = 'dovrek' AND rel_type = 'EMPLOYED_BY'"
    )
    (expected,) = await offline_embedder.embed(["Dovrek the Quiet is employed by Tarquel."])
    assert stored.to_list() == pytest.approx(expected, abs=1e-6)
