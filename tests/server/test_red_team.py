"""Red team: over a hundred attempts per NPC to read what it may not, through every tool and
resource over a real MCP client, after sessions that talked about the secrets every way a
table does (tests/server/red_team_world.py). No reply may show a hidden name or variant, a
secret fact, a DM-only line or session. The DM's run of the same attempts must find every
secret, which shows that the attempts reach them and the detector sees them."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator

import pytest
from mcp.client import Client

from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.providers.local_minilm import LocalMiniLMEmbedder
from glyphoxa_mcp.server.memory_server import build_server
from glyphoxa_mcp.server.state import ServerState
from glyphoxa_mcp.server.subscriptions import HotSubscriptions
from glyphoxa_mcp.views.view import View
from tests.conftest import read_only, unhurried
from tests.server import red_team_world as world
from tests.server.red_team_attempts import Attempt, attempts

# The whole product under attack, about 1,300 calls: with the end-to-end tests, outside the
# fast subset (the rules themselves are tested fast in tests/views/test_secrets_under_play.py).
pytestmark = pytest.mark.e2e

MIN_ATTEMPTS = 100
# Every NPC of the campaign: among them Ysolde (knows the Watch is hostile to a faction she
# may not know), Berrit and Dovrek (know the faction and one secret each), Tarquel (the
# secret is about him) and Brannoch (it is in his cellar).
NPCS = ["brannoch", "ysolde", "berrit", "maelis", "tarquel", "dovrek", "wendrith", "ilvenna"]


@contextlib.asynccontextmanager
async def client_of(
    dsn: str, embedder: LocalMiniLMEmbedder, npc: str | None
) -> AsyncIterator[Client]:
    async with read_only(dsn, 384, world.CAMPAIGN) as memory:
        view = await View.open(memory, npc, embedder)
        state = ServerState(view, unhurried(Tier.DEEP))
        server = build_server(state, subscriptions=HotSubscriptions(memory, npc))
        async with Client(server) as client:
            yield client


def shown(reply: str, attempt: Attempt) -> str:
    """The reply without the attempt's own words echoed back (the caller said them)."""
    for argument in sorted(attempt.arguments, key=len, reverse=True):
        if argument:
            reply = reply.replace(argument, "")
    return reply


def leaks(reply: str, secrets: list[world.Secret]) -> list[str]:
    found = []
    for secret in secrets:
        match = secret.pattern.search(reply)
        if match:
            start = max(match.start() - 60, 0)
            found.append(f"{secret.name}: …{reply[start : match.end() + 60]}…")
    return found


@pytest.mark.parametrize("npc", NPCS)
async def test_no_attempt_reads_a_secret_the_npc_may_not_know(
    red_team_dsn: str, offline_embedder: LocalMiniLMEmbedder, npc: str
) -> None:
    tried = attempts(npc)
    assert len(tried) >= MIN_ATTEMPTS
    secrets = world.hidden_from(npc)
    failures = []
    async with client_of(red_team_dsn, offline_embedder, npc) as client:
        for attempt in tried:
            found = leaks(shown(await attempt.run(client), attempt), secrets)
            if found:
                failures.append(f"{attempt.label} -> " + " | ".join(found))
    assert not failures, f"{len(failures)} of {len(tried)} replies leaked:\n" + "\n".join(failures)


async def test_the_dm_running_the_same_attempts_finds_every_secret(
    red_team_dsn: str, offline_embedder: LocalMiniLMEmbedder
) -> None:
    unfound = {secret.name: secret for secret in world.SECRETS}
    async with client_of(red_team_dsn, offline_embedder, None) as client:
        for attempt in attempts("berrit"):
            reply = shown(await attempt.run(client), attempt)
            for name in [n for n, s in unfound.items() if s.pattern.search(reply)]:
                del unfound[name]
    assert not unfound, f"the DM's attempts never showed: {sorted(unfound)}"


def test_the_detector_sees_every_form_the_table_used() -> None:
    said = "\n".join(line.text for *_, lines in world.SESSIONS.values() for line in lines)
    knives = world.SECRETS[0].pattern
    for form in ("Salt Knife", "salt-knives", "SaltKnives", "Salt Knives'", "Salt Nives"):
        assert knives.search(form), form
        assert re.search(re.escape(form), said), form


async def test_an_ordinary_line_that_shares_the_secrets_words_stays_readable(
    red_team_dsn: str, offline_embedder: LocalMiniLMEmbedder
) -> None:
    async with client_of(red_team_dsn, offline_embedder, "ysolde") as client:
        result = await client.call_tool(
            "memory.search_sessions", {"query": "knives at the harbour inn are dull", "top_k": 5}
        )
    assert world.HARMLESS in json.dumps(result.structured_content, ensure_ascii=False)
