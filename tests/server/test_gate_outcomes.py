"""What a tool call is told when it is not answered, through the tier gate and real
in-memory MCP clients: one typed outcome per reason, each saying whether and when to retry;
"busy" said at once; "unavailable" only once the guard has seen the database fail."""

from __future__ import annotations

import time

import anyio
import asyncpg
import pytest
from mcp.client import Client
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel

from glyphoxa_mcp.db.guard import MemoryGuard
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.domain.tool_names import NameStyle, ToolName
from glyphoxa_mcp.errors import (
    BAD_ARGUMENT_RETRY,
    CallDeadlineError,
    InternalError,
    InvalidInputError,
    MemoryBusyError,
    MemoryUnavailableError,
    with_retry_advice,
)
from glyphoxa_mcp.mcp_text import text_of
from glyphoxa_mcp.server.admission import Admission
from glyphoxa_mcp.server.metrics import Metrics
from glyphoxa_mcp.server.outcomes import UNAVAILABLE
from glyphoxa_mcp.server.state import tool_errors
from glyphoxa_mcp.server.tier_gate import TierGate
from tests.conftest import PostgresForTests

QUERY = ToolName.QUERY_ENTITIES.value


class Echo(BaseModel):
    value: int


def gated(tool: object, gate: TierGate) -> MCPServer:
    server = MCPServer("gate-test", middleware=[gate])
    server.add_tool(tool, name=QUERY, description="stand-in")  # type: ignore[arg-type]
    return server


def test_each_outcome_says_whether_and_when_to_retry() -> None:
    assert MemoryUnavailableError().message.endswith("Try again shortly.")
    assert MemoryBusyError(250).message.endswith("Retry after 250 ms.")
    assert CallDeadlineError().message.endswith(
        "Retry once; if it is cancelled again, ask for fewer results or use a deeper tier."
    )
    assert InternalError().message.endswith(
        "Retry once; if it fails again, retrying will not help."
    )
    bad = with_retry_advice(InvalidInputError("limit must be at most 50", field="limit"))
    assert bad == f"limit must be at most 50 {BAD_ARGUMENT_RETRY}"


async def test_a_crash_is_answered_as_an_internal_error_never_the_bare_sdk_text() -> None:
    async def crash(value: int) -> Echo:
        raise RuntimeError("a driver state nobody expected")

    async def crash_inside(value: int) -> Echo:
        with tool_errors():
            raise RuntimeError("a driver state nobody expected")

    for tool in (crash, crash_inside):
        gate = TierGate(tier_policy(Tier.STANDARD), NameStyle.DOTTED)
        async with Client(gated(tool, gate)) as client:
            result = await client.call_tool(QUERY, {"value": 1})
        assert result.is_error
        assert text_of(result.content).endswith(f"{QUERY}: {InternalError().message}")
        assert "nobody expected" not in text_of(result.content)


@pytest.mark.slow
async def test_busy_is_said_at_once_when_the_measured_service_time_cannot_meet_the_deadline() -> (
    None
):
    async def slow(value: int) -> Echo:
        await anyio.sleep(0.6)
        return Echo(value=value)

    metrics = Metrics()
    gate = TierGate(
        tier_policy(Tier.STANDARD, 1_000),
        NameStyle.DOTTED,
        metrics=metrics,
        admission=Admission(1, on_refused=lambda tier, at_once: metrics.refused(tier, at_once)),
    )
    async with Client(gated(slow, gate)) as client:
        # Measured once: 600 ms of the 1 s deadline.
        assert not (await client.call_tool(QUERY, {"value": 0})).is_error
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tasks:
                answered: list[bool] = []

                async def first() -> None:
                    answered.append(not (await client.call_tool(QUERY, {"value": 1})).is_error)

                tasks.start_soon(first)
                while not gate.admission.running:
                    await anyio.sleep(0.001)
                started = time.monotonic()
                refused = await client.call_tool(QUERY, {"value": 2})
                refused_s = time.monotonic() - started
    assert answered == [True]
    assert refused.is_error
    text = text_of(refused.content)
    assert "memory is busy" in text and "nothing was run" in text and "Retry after" in text
    # Told without waiting for the call ahead (600 ms): 50 ms on a quiet machine; a loaded
    # two-core one may add its own delay to an in-memory round trip.
    assert refused_s < 0.3, refused_s
    exposition = metrics.exposition().decode()
    assert 'glyphoxa_admission_refusals_total{tier="STANDARD",when="at_once"} 1.0' in exposition
    assert 'reason="busy"' in exposition


async def test_a_saturated_pool_on_a_healthy_database_is_never_called_unavailable(
    test_server: PostgresForTests,
) -> None:
    """Every pooled connection held and calls past a deadline too short for the guard's probe
    to come back: the guard has seen no failure, so no call may say "unavailable"."""
    pool = await asyncpg.create_pool(test_server.admin_dsn, min_size=2, max_size=2)
    try:
        held = [await pool.acquire() for _ in range(2)]

        async def needs_a_connection(value: int) -> Echo:
            with tool_errors():
                async with pool.acquire() as conn:
                    return Echo(value=await conn.fetchval("SELECT $1::int", value))

        async with MemoryGuard(test_server.admin_dsn).running() as guard:
            guard.saturated = lambda: pool.get_idle_size() == 0
            metrics = Metrics()
            # 4 ms: the guard's probe (a new connection) starts at 2 ms and cannot be back.
            gate = TierGate(
                tier_policy(Tier.FAST, 4), NameStyle.DOTTED, guard=guard, metrics=metrics
            )
            texts: list[str] = []
            async with Client(gated(needs_a_connection, gate)) as client:
                for _ in range(3):
                    async with anyio.create_task_group() as tasks:

                        async def call(value: int) -> None:
                            result = await client.call_tool(QUERY, {"value": value})
                            assert result.is_error
                            texts.append(text_of(result.content))

                        for value in range(8):
                            tasks.start_soon(call, value)
            assert guard.available
            for conn in held:
                await pool.release(conn)
        assert len(texts) == 24
        assert not [t for t in texts if UNAVAILABLE in t], texts
        assert all("busy" in t or "every database connection in use" in t for t in texts), texts
        assert 'reason="unavailable"' not in metrics.exposition().decode()
    finally:
        await pool.close()
