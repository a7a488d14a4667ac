"""Secrets a DM creates (campaign file, `secret mark`) never reach an NPC outside known_by in
any tool or the hot resource, and reach it once revealed."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator

import pytest
from mcp.client import Client

from glyphoxa_mcp.campaign.loader import load_campaign
from glyphoxa_mcp.campaign.sample import sample_campaign
from glyphoxa_mcp.campaign.yaml_source import parse_campaign_file
from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.models import NewFact
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.storage.memory import CampaignMemory
from glyphoxa_mcp.views.view import View
from tests.cli.runner import run_in_process as run_cli
from tests.conftest import unhurried
from tests.server.conftest import call


@contextlib.asynccontextmanager
async def as_npc(db: Database, npc: str, embedder: LocalMiniLMEmbedder) -> AsyncIterator[Client]:
    state = ServerState(View(CampaignMemory(db, "demo"), npc, embedder), unhurried(Tier.DEEP))
    async with Client(build_server(state)) as client:
        yield client


async def everything_seen(client: Client, npc: str) -> str:
    """What an NPC can get from every tool and its hot context, as one text."""
    seen = [
        await call(client, "memory.query_entities", name="Salt Knives"),
        await call(client, "memory.query_entities", related_to="Tarquel", depth=3),
        await call(
            client,
            "memory.search_facts",
            query="Salt Knives contraband cellar Tarquel caravan",
            top_k=20,
        ),
        await call(client, "memory.search_facts", query="contraband", entity="Red Kettle"),
    ]
    hot = await client.read_resource(f"glyphoxa://npc/{npc}/hot")
    return json.dumps(seen) + hot.contents[0].text


@pytest.mark.slow
async def test_secrets_from_the_campaign_file_and_secret_mark(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    await load_campaign(db384, parse_campaign_file(sample_campaign(), "campaign.yaml"))
    async with as_npc(db384, "ysolde", offline_embedder) as ysolde:
        assert "Salt Knives" not in await everything_seen(ysolde, "ysolde")
    async with as_npc(db384, "berrit", offline_embedder) as berrit:
        assert "contraband in the cellar" in await everything_seen(berrit, "berrit")

    dsn = ["--dsn", db384.location.dsn, "--embedding-dim", "384", "--campaign", "demo"]
    tarquel_fact = json.loads(run_cli("fact", "list", "Tarquel", "--json", *dsn).stdout)
    [insurance] = [f for f in tarquel_fact if "insurance" in f["text"]]
    # The DM tells Dovrek (only) about Tarquel's scheme, then reveals the Salt Knives to all.
    assert (
        run_cli(
            "secret", "mark", f"fact:{insurance['id']}", "--known-by", "Dovrek", *dsn
        ).returncode
        == 0
    )
    async with as_npc(db384, "dovrek", offline_embedder) as dovrek:
        assert "insurance" in await everything_seen(dovrek, "dovrek")
    async with as_npc(db384, "ysolde", offline_embedder) as ysolde:
        assert "insurance" not in await everything_seen(ysolde, "ysolde")

    assert run_cli("secret", "reveal", "Salt Knives", *dsn).returncode == 0
    assert run_cli("secret", "reveal", "fact:" + str(insurance["id"]), *dsn).returncode == 0
    async with as_npc(db384, "ysolde", offline_embedder) as ysolde:
        seen = await everything_seen(ysolde, "ysolde")
    assert "Salt Knives" in seen and "insurance" in seen
    # Berrit's membership is still his own secret.
    assert "Old Berrit is a member of Salt Knives" not in seen


@pytest.mark.slow
async def test_a_running_server_applies_a_new_secret_at_its_next_call(
    db384: Database, offline_embedder: LocalMiniLMEmbedder
) -> None:
    """Scopes (and their redactors) are cached until an entity changes; a change made by
    another process counts from the next call on."""
    await load_campaign(db384, parse_campaign_file(sample_campaign(), "campaign.yaml"))
    # Free text naming Maelis, about someone else: only the redactor can keep it back.
    await CampaignMemory(db384, "demo").graph.upsert_fact(
        NewFact(subject_id="temple-of-the-tide", text="Maelis keeps the keys of the temple.")
    )
    dsn = ["--dsn", db384.location.dsn, "--embedding-dim", "384", "--campaign", "demo"]

    async def seen(client: Client) -> str:
        return json.dumps(
            [
                await call(client, "memory.query_entities", name="Maelis"),
                await call(client, "memory.search_facts", query="keys of the temple"),
            ]
        )

    async with as_npc(db384, "ysolde", offline_embedder) as ysolde:
        assert "Maelis keeps the keys" in await seen(ysolde)
        assert run_cli("secret", "mark", "Maelis", *dsn).returncode == 0
        assert "Maelis" not in await seen(ysolde)
        assert run_cli("secret", "reveal", "Maelis", *dsn).returncode == 0
        assert "Maelis keeps the keys" in await seen(ysolde)
