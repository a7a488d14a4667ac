"""The token gate's memory of grants: trusted for at most RECHECK_S, read again in the
background past FRESH_S so that a request seldom waits for the database at the door."""

from __future__ import annotations

from types import SimpleNamespace

import anyio
import pytest

from glyphoxa_mcp.db.database import Database
from glyphoxa_mcp.domain.viewer import Viewer
from glyphoxa_mcp.server import token_gate
from glyphoxa_mcp.server.token_gate import FRESH_S, RECHECK_S, Refused, TokenGate
from glyphoxa_mcp.storage.access_tokens import AccessTokens
from tests.server.http_serving import load_demo


@pytest.fixture
def db(db256: Database) -> Database:
    return db256


@pytest.fixture
async def tokens(db: Database) -> AccessTokens:
    await load_demo(db)
    return AccessTokens(db)


@pytest.fixture
def now(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The gate's clock, moved by the test."""
    moment = [1000.0]
    monkeypatch.setattr(token_gate, "time", SimpleNamespace(monotonic=lambda: moment[0]))
    return moment


async def test_a_grant_past_fresh_is_used_while_read_again_and_never_past_recheck(
    tokens: AccessTokens, now: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    grant, token = await tokens.create(Viewer.npc("demo", "ysolde"))
    authorization = f"Bearer {token.token}"
    reads: list[str] = []
    answer = anyio.Event()
    read_for_real = TokenGate.tokens_for

    async def slow_second_read(gate: TokenGate, token_id: str) -> list[object]:
        reads.append(token_id)
        if len(reads) == 2:
            await answer.wait()  # the database is slow to answer this one
        return await read_for_real(gate, token_id)

    monkeypatch.setattr(TokenGate, "tokens_for", slow_second_read)
    gate = TokenGate(tokens)
    async with anyio.create_task_group() as tasks:
        gate.run_in(tasks)
        assert (await gate.identify(authorization)).id == grant.id
        now[0] += FRESH_S
        with anyio.fail_after(5):
            # At once, with the grant read before, while it is read again behind the request.
            assert (await gate.identify(authorization)).id == grant.id
            while len(reads) < 2:
                await anyio.sleep(0.001)
            # One reading at a time.
            assert (await gate.identify(authorization)).id == grant.id
            assert len(reads) == 2
            await tokens.revoke(grant.id)
            answer.set()
            while gate._refreshing:
                await anyio.sleep(0.001)
        # What the background read found holds at once: the token was revoked.
        with pytest.raises(Refused, match="revoked"):
            await gate.identify(authorization)
        # Past RECHECK_S a grant read before is never used: the request reads for itself,
        # though it could have been read ahead.
        berrit, other = await tokens.create(Viewer.npc("demo", "berrit"))
        assert (await gate.identify(f"Bearer {other.token}")).id == berrit.id
        await tokens.revoke(berrit.id)
        now[0] += RECHECK_S
        read_before = len(reads)
        with pytest.raises(Refused, match="revoked"):
            await gate.identify(f"Bearer {other.token}")
        assert len(reads) == read_before + 1 and not gate._refreshing


async def test_without_a_place_to_read_ahead_a_request_reads_a_grant_past_fresh_itself(
    tokens: AccessTokens, now: list[float]
) -> None:
    grant, token = await tokens.create(Viewer.npc("demo", "ysolde"))
    gate = TokenGate(tokens)
    assert (await gate.identify(f"Bearer {token.token}")).id == grant.id
    await tokens.revoke(grant.id)
    now[0] += FRESH_S
    with pytest.raises(Refused, match="revoked"):
        await gate.identify(f"Bearer {token.token}")
