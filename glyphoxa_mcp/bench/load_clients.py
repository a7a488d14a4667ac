"""The clients of `bench load`, in processes of their own.

A client's own event loop is part of every latency it records: 64 MCP clients in one Python
process keep that loop busy enough to run its timers tens of milliseconds late, which a
50 ms refusal target cannot tell from the server's delay. So the clients are dealt into
groups (`LoadSettings.processes`), each in a process started fresh (`spawn`: the bench's own
process holds a database pool and a running event loop, which a fork would copy), as clients
on separate machines would be.

A group's process opens its clients' sessions and makes each one's first calls, says it is
ready, waits for the clock's end (one `time.monotonic` for every process of a machine),
calls until then, and sends back every call's record, the sessions it opened again and how
late its event loop ran. `ClientProcesses` is the parent's side: it starts the groups, waits
for all of them to be ready, starts them together, and gathers what they send; a group that
fails to start, or a process that dies, stops the run with what went wrong.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import random
import re
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any

import anyio
from httpx2 import AsyncClient as HttpClient
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from glyphoxa_mcp.bench.cpu import own_and_reaped_children, tree_cpu_s
from glyphoxa_mcp.bench.load import (
    CONNECT,
    ERROR,
    EXCEPTION,
    OK,
    TOOL_MIX,
    CallRecord,
    Outcome,
    next_tool,
)
from glyphoxa_mcp.bench.operations import (
    QUERY_ENTITIES,
    SEARCH_FACTS,
    SEARCH_SESSIONS,
    SESSION_SUMMARY,
)
from glyphoxa_mcp.bench.workload import Workload
from glyphoxa_mcp.domain.tiers import Tier, tier_policy
from glyphoxa_mcp.errors import BenchError
from glyphoxa_mcp.mcp_text import text_of

# Clients making their first calls at once, before the clock starts, over every process:
# all of them together would only pile cold calls past their deadline.
WARMING_AT_ONCE = 4
# How often a client process's event loop is asked to wake, to see how late it does.
LAG_PROBE_S = 0.05
# A request with no answer by then fails (an exception) instead of hanging its client.
READ_TIMEOUT_S = 30
# Before a broken session is opened again.
RECONNECT_PAUSE_S = 0.1
# How often the parent looks at its groups while it waits for them.
POLL_S = 0.2
# How long the groups may take to open their sessions and make their first calls.
READY_WITHIN_S = 600
# How long after the clock's end a group may take to send its records.
DONE_WITHIN_S = READ_TIMEOUT_S + 30
RETRY_AFTER = re.compile(r"Retry after (\d+) ms")
# A group's messages: ready; failed, with what went wrong; done, with its result.
READY = "ready"
FAILED = "failed"
DONE = "done"


def endpoint_path(campaign: str, npc_id: str | None, tier: Tier = Tier.STANDARD) -> str:
    viewer = "dm" if npc_id is None else f"npc/{npc_id}"
    return f"/c/{campaign}/{viewer}/{tier.value.lower()}/mcp"


def retry_after_s(message: str) -> float:
    """The wait a busy answer asks for ("Retry after N ms."); 0 for any other answer."""
    asked = RETRY_AFTER.search(message)
    return int(asked.group(1)) / 1000 if asked else 0.0


def innermost(exc: BaseException) -> BaseException:
    """The first exception a task group's group holds, however deep; else `exc`."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def describe(exc: BaseException) -> str:
    exc = innermost(exc)
    return f"{type(exc).__name__}: {exc}".strip().rstrip(":")


def arguments_of(workload: Workload) -> dict[str, tuple[dict[str, Any], ...]]:
    return {
        QUERY_ENTITIES: workload.query_entities,
        SESSION_SUMMARY: workload.session_summary,
        SEARCH_FACTS: workload.search_facts,
        SEARCH_SESSIONS: workload.search_sessions,
    }


@dataclass(frozen=True)
class PlannedClient:
    number: int
    npc_id: str | None
    tier: Tier
    workload: Workload


@dataclass(frozen=True)
class GroupPlan:
    """What one client process is to do."""

    base: str
    campaign: str
    # Bearer token of each viewer (None: the DM).
    tokens: dict[str | None, str]
    clients: tuple[PlannedClient, ...]
    warming_at_once: int


@dataclass(frozen=True)
class GroupResult:
    records: list[CallRecord]
    reconnects: int
    # How late the group's event loop ran a timer, every LAG_PROBE_S of the run (ms).
    lags_ms: list[float]


@dataclass
class Swarm:
    """The clients of one process and what they recorded."""

    base: str
    tokens: dict[str | None, str]
    clients: int
    campaign: str = ""
    warming: anyio.CapacityLimiter = field(
        default_factory=lambda: anyio.CapacityLimiter(WARMING_AT_ONCE)
    )
    ready: anyio.Event = field(default_factory=anyio.Event)
    start: anyio.Event = field(default_factory=anyio.Event)
    warmed: int = 0
    end: float = 0.0
    records: list[CallRecord] = field(default_factory=list)
    reconnects: int = 0

    def time_is_up(self) -> bool:
        return self.start.is_set() and time.monotonic() >= self.end

    @contextlib.asynccontextmanager
    async def session(self, npc_id: str | None, tier: Tier) -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {self.tokens[npc_id]}"}
        http = HttpClient(headers=headers, timeout=READ_TIMEOUT_S)
        url = self.base + endpoint_path(self.campaign, npc_id, tier)
        async with (
            http,
            Client(
                streamable_http_client(url, http_client=http),
                read_timeout_seconds=READ_TIMEOUT_S,
            ) as client,
        ):
            yield client

    async def calls(
        self,
        client: Client,
        rng: random.Random,
        arguments: dict[str, Any],
        used: dict[str, int],
        tier: Tier,
    ) -> bool:
        """Calls back to back until the time is up (False), or until one fails without an
        answer in a way that may have broken the session (True)."""
        while not self.time_is_up():
            tool = next_tool(rng) if len(arguments) > 1 else next(iter(arguments))
            asked = arguments[tool][used[tool] % len(arguments[tool])]
            used[tool] += 1
            began = time.perf_counter_ns()
            try:
                result = await client.call_tool(tool, asked)
            except MCPError as exc:  # an error answer: the session goes on
                self._record(tool, tier, began, EXCEPTION, describe(exc))
                continue
            except Exception as exc:
                self._record(tool, tier, began, EXCEPTION, describe(exc))
                return True
            if result.is_error:
                told = text_of(result.content)
                self._record(tool, tier, began, ERROR, told)
                # As a client should: a busy server's "retry after N ms" is waited out.
                await anyio.sleep(retry_after_s(told))
            else:
                self._record(tool, tier, began, OK)
        return False

    def _record(
        self, tool: str, tier: Tier, began_ns: int, outcome: Outcome, message: str | None = None
    ) -> None:
        duration_ms = (time.perf_counter_ns() - began_ns) / 1e6
        self.records.append(CallRecord(tool, duration_ms, outcome, message, tier.value))

    async def client(self, planned: PlannedClient) -> None:
        """One client: its session, a call of every tool its tier offers, the signal that it
        is ready, and its calls once the clock starts; a session that breaks is opened again."""
        number, npc_id, tier = planned.number, planned.npc_id, planned.tier
        rng = random.Random(f"load:{number}")
        offered = {tool.value for tool in tier_policy(tier).tools}
        arguments = {t: a for t, a in arguments_of(planned.workload).items() if t in offered}
        used = dict.fromkeys(TOOL_MIX, 0)
        warmed = False
        while True:
            broke = False
            began = time.perf_counter_ns()
            try:
                async with self.session(npc_id, tier) as client:
                    if not warmed:
                        async with self.warming:
                            for tool, rotation in arguments.items():
                                # An error answer is fine here (a cold server may pass a
                                # deadline); a client that cannot call at all stops the run.
                                await client.call_tool(tool, rotation[0])
                        warmed = True
                        self.warmed += 1
                        if self.warmed == self.clients:
                            self.ready.set()
                        await self.start.wait()
                    broke = await self.calls(client, rng, arguments, used, tier)
            except Exception as exc:
                if not warmed:
                    raise BenchError(
                        f"Client {number} ({endpoint_path(self.campaign, npc_id, tier)}) could "
                        f"not start: {describe(exc)}"
                    ) from exc
                if not broke:
                    self._record(CONNECT, tier, began, EXCEPTION, describe(exc))
                    broke = True
            if not broke or self.time_is_up():
                return
            self.reconnects += 1
            await anyio.sleep(RECONNECT_PAUSE_S)


async def probe_loop(until: float, lags_ms: list[float]) -> None:
    """How late this process's event loop runs a timer, every LAG_PROBE_S until `until`: the
    clients' latencies include it, so a late answer may be the clients' as much as the
    server's."""
    while time.monotonic() < until:
        asked = time.perf_counter()
        await anyio.sleep(LAG_PROBE_S)
        lags_ms.append(max((time.perf_counter() - asked - LAG_PROBE_S) * 1000, 0.0))


def run_group(plan: GroupPlan, parent: Connection) -> None:
    """A client process's whole life (the target `ClientProcesses` starts)."""
    try:
        told: tuple[str, object] = (DONE, anyio.run(_group, plan, parent))
    except Exception as exc:
        told = (FAILED, _told(exc))
    # The parent may have stopped the run meanwhile: then no one is left to tell.
    with contextlib.suppress(BrokenPipeError, EOFError), parent:
        parent.send(told)


def _told(exc: BaseException) -> str:
    """What went wrong, for the parent: a BenchError's own sentence, else the exception."""
    exc = innermost(exc)
    return str(exc) if isinstance(exc, BenchError) else describe(exc)


async def _group(plan: GroupPlan, parent: Connection) -> GroupResult:
    swarm = Swarm(
        plan.base,
        plan.tokens,
        len(plan.clients),
        campaign=plan.campaign,
        warming=anyio.CapacityLimiter(plan.warming_at_once),
    )
    lags_ms: list[float] = []
    async with anyio.create_task_group() as clients:
        for planned in plan.clients:
            clients.start_soon(swarm.client, planned)
        await swarm.ready.wait()
        # What the warm-up built (the SDK's models, the sessions) lives to the end: out of
        # the cyclic collector's sight, whose full pass over it once held each process's
        # loop for 110-150 ms mid-run, and a refusal caught behind it looked late.
        gc.collect()
        gc.freeze()
        parent.send((READY, None))
        # The clock's end, once every group is ready (EOFError if the parent went away).
        swarm.end = float(await anyio.to_thread.run_sync(parent.recv))
        swarm.start.set()
        clients.start_soon(probe_loop, swarm.end, lags_ms)
    return GroupResult(swarm.records, swarm.reconnects, lags_ms)


def groups_of(clients: Sequence[PlannedClient], processes: int) -> list[tuple[PlannedClient, ...]]:
    """The clients dealt out over `processes` groups in turn, so that every group holds the
    same mix of viewers and tiers; no group is empty."""
    count = max(1, min(processes, len(clients)))
    return [tuple(clients[i::count]) for i in range(count)]


@dataclass
class _Group:
    process: BaseProcess
    connection: Connection


class ClientProcesses:
    """The parent's side of the client processes of one run."""

    def __init__(self, plans: Sequence[GroupPlan]) -> None:
        self.plans = list(plans)
        self._groups: list[_Group] = []
        self._end = 0.0

    @property
    def pids(self) -> list[int]:
        return [group.process.pid for group in self._groups if group.process.pid is not None]

    def cpu_s(self) -> float:
        """CPU seconds so far of this process and of its client processes, running or ended:
        a running one is read from /proc, one that ended from this process's counters of its
        children once it is waited for (`exitcode` waits for one that has ended)."""
        running = [g.process.pid for g in self._groups if g.process.exitcode is None]
        spent = sum(tree_cpu_s(pid) or 0.0 for pid in running if pid is not None)
        return spent + own_and_reaped_children()

    @contextlib.contextmanager
    def started(self) -> Iterator[ClientProcesses]:
        """The groups' processes, running; stopped on the way out, however it is left."""
        spawn = multiprocessing.get_context("spawn")
        try:
            for plan in self.plans:
                ours, theirs = spawn.Pipe()
                process = spawn.Process(
                    target=run_group, args=(plan, theirs), name="bench-load-clients", daemon=True
                )
                process.start()
                theirs.close()
                self._groups.append(_Group(process, ours))
            yield self
        finally:
            for group in self._groups:
                group.connection.close()
                group.process.join(timeout=5)
                if group.process.is_alive():
                    group.process.kill()
                    group.process.join()

    async def ready(self) -> None:
        """Once every group has its sessions open and warm; BenchError if one cannot."""
        for number, group in enumerate(self._groups):
            kind, _ = await self._message(number, group, READY_WITHIN_S)
            if kind != READY:
                raise BenchError(f"Client process {number} did not start its clients.")

    def start(self, end: float) -> None:
        """Every group calls until `end` (time.monotonic)."""
        self._end = end
        for group in self._groups:
            group.connection.send(end)

    async def results(self) -> list[GroupResult]:
        """Every group's records, once the clock has run out and their last calls ended."""
        results = []
        for number, group in enumerate(self._groups):
            within_s = self._end - time.monotonic() + DONE_WITHIN_S
            kind, sent = await self._message(number, group, within_s)
            if kind != DONE or not isinstance(sent, GroupResult):
                raise BenchError(f"Client process {number} sent no records.")
            results.append(sent)
            group.process.join(timeout=5)
        return results

    async def _message(self, number: int, group: _Group, within_s: float) -> tuple[str, object]:
        """The group's next message; BenchError if it failed, died or said nothing in time."""
        waited = 0.0
        while not await anyio.to_thread.run_sync(group.connection.poll, POLL_S):
            waited += POLL_S
            if not group.process.is_alive() and not group.connection.poll():
                raise BenchError(
                    f"Client process {number} ended (exit code {group.process.exitcode}) "
                    "without a word."
                )
            if waited >= within_s:
                raise BenchError(f"Client process {number} said nothing for {waited:.0f} s.")
        try:
            kind, sent = group.connection.recv()
        except EOFError:
            raise BenchError(f"Client process {number} closed its pipe without a word.") from None
        if kind == FAILED:
            raise BenchError(f"Client process {number}: {sent}")
        return str(kind), sent
