"""The client processes of `bench load`: how clients are dealt over them, and what the parent
is told when one cannot start its clients."""

from __future__ import annotations

import socket

import anyio
import pytest

from glyphoxa_mcp.bench.load_clients import ClientProcesses, GroupPlan, PlannedClient, groups_of
from glyphoxa_mcp.bench.workload import Workload
from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.errors import BenchError

WORKLOAD = Workload(
    npc_id=None,
    query_entities=({"name": "Ysolde"},),
    session_summary=({"sessions_ago": 1},),
    search_facts=({"query": "bridge", "top_k": 5},),
    search_sessions=({"query": "bridge", "top_k": 5},),
    hot_uris=(),
    query_vectors={},
)


def _planned(count: int) -> list[PlannedClient]:
    tiers = (Tier.FAST, Tier.STANDARD, Tier.DEEP)
    return [
        PlannedClient(n, None if n % 2 else f"npc-{n}", tiers[n % 3], WORKLOAD)
        for n in range(count)
    ]


def test_clients_are_dealt_in_turn_so_every_group_holds_the_same_mix() -> None:
    groups = groups_of(_planned(12), 4)
    assert [[c.number for c in group] for group in groups] == [
        [0, 4, 8],
        [1, 5, 9],
        [2, 6, 10],
        [3, 7, 11],
    ]
    assert sorted(c.number for group in groups for c in group) == list(range(12))


def test_no_group_is_empty_and_there_is_always_one() -> None:
    assert [len(g) for g in groups_of(_planned(3), 8)] == [1, 1, 1]
    assert [len(g) for g in groups_of(_planned(5), 0)] == [5]


def _closed_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return int(free.getsockname()[1])


@pytest.mark.slow
async def test_a_group_that_cannot_start_its_clients_stops_the_run_saying_which_and_why() -> None:
    # Nothing listens there: the client's first call cannot be made.
    plan = GroupPlan(
        base=f"http://127.0.0.1:{_closed_port()}",
        campaign="nowhere",
        tokens={None: "t0k3n"},
        clients=(PlannedClient(7, None, Tier.STANDARD, WORKLOAD),),
        warming_at_once=1,
    )
    with anyio.fail_after(60), ClientProcesses([plan]).started() as clients:
        assert len(clients.pids) == 1
        with pytest.raises(BenchError) as raised:
            await clients.ready()
    message = str(raised.value)
    assert message.startswith("Client process 0: Client 7 (/c/nowhere/dm/standard/mcp)")
    assert "could not start" in message and "Connect" in message
