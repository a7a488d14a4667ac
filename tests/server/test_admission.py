"""Admission control on its own, with a clock the test moves: refusals decided from measured
service times, and the order in which waiting calls are served."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import anyio
import pytest
from anyio.abc import TaskGroup

from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.errors import MemoryBusyError
from glyphoxa_mcp.server.admission import STALE_AFTER_S, Admission, ServiceTime


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def counted(clock: Clock, places: int = 1) -> tuple[Admission, list[tuple[Tier, bool]]]:
    """Admission with `places` on `clock`, and the list each refusal is told to: its tier,
    and whether at once."""
    refusals: list[tuple[Tier, bool]] = []
    admission = Admission(
        places, clock=clock, on_refused=lambda t, at_once: refusals.append((t, at_once))
    )
    return admission, refusals


async def measured(
    admission: Admission, clock: Clock, tool: str, tier: Tier, deadline_s: float, took_s: float
) -> None:
    """Calls of `tool` measured at `took_s` each, often enough for the estimate to settle,
    then time enough passed that no tier's recent traffic is foreseen."""
    for _ in range(40):
        async with admission.admitted(tool, tier, deadline_s):
            clock.now += took_s
    clock.now += 60.0


async def until(condition: object) -> None:
    with anyio.fail_after(5):
        while not condition():  # type: ignore[operator]
            await anyio.sleep(0.001)


@contextlib.asynccontextmanager
async def held(admission: Admission, calls: int) -> AsyncIterator[None]:
    """`calls` STANDARD calls of "search" (1 s) holding their places, or waiting for one,
    until the block ends."""
    release = anyio.Event()
    async with anyio.create_task_group() as tasks:

        async def call() -> None:
            async with admission.admitted("search", Tier.STANDARD, 1.0):
                await release.wait()

        for started in range(1, calls + 1):
            tasks.start_soon(call)
            await until(
                lambda started=started: len(admission.running + admission.waiting) == started
            )
        try:
            yield
        finally:
            release.set()


async def test_a_call_the_measured_service_time_says_cannot_finish_in_time_is_refused_at_once() -> (
    None
):
    clock = Clock()
    admission, refusals = counted(clock)
    await measured(admission, clock, "search", Tier.STANDARD, 1.0, 0.6)
    async with held(admission, 1):
        clock.now += 0.1
        asked_at = clock.now
        with pytest.raises(MemoryBusyError) as refused:
            async with admission.admitted("search", Tier.STANDARD, 1.0):
                pytest.fail("admitted a call that cannot finish within its deadline")
        assert clock.now == asked_at  # answered at once: nothing waited for
        assert refused.value.retry_after_ms > 0
        assert f"Retry after {refused.value.retry_after_ms} ms." in refused.value.message
        assert admission.waiting == []
    assert refusals == [(Tier.STANDARD, True)]


async def test_a_call_that_fits_waits_for_a_place_instead_of_being_refused() -> None:
    clock = Clock()
    admission = Admission(1, clock=clock)
    await measured(admission, clock, "query", Tier.STANDARD, 1.0, 0.05)
    hold = anyio.Event()
    served: list[str] = []
    async with anyio.create_task_group() as tasks:

        async def call(name: str) -> None:
            async with admission.admitted("query", Tier.STANDARD, 1.0):
                served.append(name)
                await hold.wait()

        tasks.start_soon(call, "first")
        await until(lambda: len(admission.running) == 1)
        tasks.start_soon(call, "second")
        await until(lambda: len(admission.waiting) == 1)
        hold.set()
    assert served == ["first", "second"]


async def test_a_fast_call_is_served_before_deep_calls_that_were_waiting_longer() -> None:
    clock = Clock()
    admission = Admission(1, clock=clock)
    for name, tier, deadline_s in (("deep 1", Tier.DEEP, 40.0), ("deep 2", Tier.DEEP, 40.0)):
        await measured(admission, clock, name, tier, deadline_s, 1.0)
    await measured(admission, clock, "fast", Tier.FAST, 10.0, 1.0)
    admitted: list[str] = []
    releases = {name: anyio.Event() for name in ("deep 1", "deep 2", "fast")}
    async with anyio.create_task_group() as tasks:

        async def call(name: str, tier: Tier, deadline_s: float) -> None:
            async with admission.admitted(name, tier, deadline_s):
                admitted.append(name)
                await releases[name].wait()

        # Generous deadlines: the order is what is tested, not the time.
        tasks.start_soon(call, "deep 1", Tier.DEEP, 40.0)
        await until(lambda: admitted == ["deep 1"])
        tasks.start_soon(call, "deep 2", Tier.DEEP, 40.0)
        await until(lambda: len(admission.waiting) == 1)
        clock.now += 10.0  # deep 1 has had its foreseen time: a place is due any moment
        tasks.start_soon(call, "fast", Tier.FAST, 10.0)
        await until(lambda: len(admission.waiting) == 2)
        releases["deep 1"].set()
        await until(lambda: len(admitted) == 2)
        releases["fast"].set()
        releases["deep 2"].set()
    assert admitted == ["deep 1", "fast", "deep 2"]


async def test_deep_calls_leave_places_for_faster_tiers() -> None:
    admission = Admission(4)
    assert admission.limit(Tier.DEEP) == 2
    assert admission.limit(Tier.FAST) == admission.limit(Tier.STANDARD) == 4


async def test_a_call_cancelled_while_it_waits_gives_its_place_back() -> None:
    clock = Clock()
    admission = Admission(1, clock=clock)
    await measured(admission, clock, "query", Tier.DEEP, 40.0, 1.0)
    hold = anyio.Event()
    async with anyio.create_task_group() as tasks:

        async def running() -> None:
            async with admission.admitted("query", Tier.DEEP, 40.0):
                await hold.wait()

        tasks.start_soon(running)
        await until(lambda: len(admission.running) == 1)
        with anyio.move_on_after(0.05):
            async with admission.admitted("query", Tier.DEEP, 40.0):
                pytest.fail("admitted while the only place was taken")
        assert admission.waiting == []
        hold.set()
    assert admission.running == []


async def test_a_call_that_fast_traffic_would_overtake_is_refused_at_once_not_after_waiting() -> (
    None
):
    """Without FAST calls about, a STANDARD call behind one running call fits its deadline;
    with a steady stream of them, which go ahead of it while it waits, it does not, and is
    told so at once rather than after waiting."""

    async def standard_behind_one_running(fast_stream: bool) -> bool:
        clock = Clock()
        admission = Admission(1, clock=clock)
        await measured(admission, clock, "search", Tier.STANDARD, 1.0, 0.25)
        await measured(admission, clock, "query", Tier.FAST, 0.15, 0.04)
        if fast_stream:
            for _ in range(20):  # 20 FAST calls of 40 ms over the last second
                async with admission.admitted("query", Tier.FAST, 0.15):
                    clock.now += 0.04
                clock.now += 0.01
        hold = anyio.Event()
        async with anyio.create_task_group() as tasks:

            async def running() -> None:
                async with admission.admitted("search", Tier.STANDARD, 1.0):
                    await hold.wait()

            tasks.start_soon(running)
            await until(lambda: len(admission.running) == 1)
            asked_at = clock.now
            try:
                with anyio.move_on_after(0.05):
                    async with admission.admitted("search", Tier.STANDARD, 1.0):
                        pass
                admitted = True
            except MemoryBusyError:
                assert clock.now == asked_at  # at once
                admitted = False
            hold.set()
        return admitted

    assert await standard_behind_one_running(fast_stream=False)
    assert not await standard_behind_one_running(fast_stream=True)


@pytest.mark.parametrize("stale", [False, True])
async def test_a_queued_call_keeps_its_place_and_a_fast_call_that_would_break_it_is_refused(
    stale: bool,
) -> None:
    """A STANDARD call queued with little time to spare was promised its place: a FAST call
    that would go ahead of it far enough to make it miss its deadline is refused at once,
    and the queued call is served, not refused after waiting. So too when the FAST call's
    estimate is out of date: a call let in to measure it keeps the promises."""
    clock = Clock()
    admission, refusals = counted(clock)
    await measured(admission, clock, "search", Tier.STANDARD, 1.0, 0.25)
    await measured(admission, clock, "query", Tier.FAST, 4.0, 0.5)
    if stale:
        admission.times[("query", Tier.FAST)].refused(clock.now - STALE_AFTER_S)
    served: list[str] = []
    release = anyio.Event()
    async with anyio.create_task_group() as tasks:

        async def search(name: str) -> None:
            async with admission.admitted("search", Tier.STANDARD, 1.0):
                served.append(name)
                await release.wait()

        tasks.start_soon(search, "running")
        await until(lambda: served == ["running"])
        # Starts in about 250 ms; latest start 650 ms (900 ms to finish by, 250 to run).
        tasks.start_soon(search, "queued")
        await until(lambda: len(admission.waiting) == 1)
        # The FAST call's own generous deadline it would meet; going 500 ms ahead of the
        # queued call would make that one miss its own.
        with pytest.raises(MemoryBusyError):
            async with admission.admitted("query", Tier.FAST, 4.0):
                pytest.fail("a FAST call broke the queued call's promise")
        release.set()
    assert served == ["running", "queued"]
    assert refusals == [(Tier.FAST, True)]


async def test_the_time_a_call_spent_reaching_the_gate_counts_against_its_deadline() -> None:
    """A free place is no use to a call whose HTTP and MCP layers already took so much of
    its deadline that it could not finish in time: refused at once; one with time left runs."""
    clock = Clock()
    admission = Admission(1, clock=clock)
    await measured(admission, clock, "search", Tier.STANDARD, 1.0, 0.2)
    with pytest.raises(MemoryBusyError):
        async with admission.admitted("search", Tier.STANDARD, 1.0, waited_s=0.75):
            pytest.fail("ran a call that could not finish within its deadline")
    async with admission.admitted("search", Tier.STANDARD, 1.0, waited_s=0.3) as ticket:
        assert ticket.remaining_s(clock.now) == pytest.approx(0.7)


async def test_a_wait_longer_than_foreseen_is_absorbed_while_the_call_can_still_finish() -> None:
    """A call let wait on a foreseen 200 ms whose wait runs to 650 ms (the running call took
    longer than its measure) is still served: its service time fits before the answer's way
    back, so it is not refused after waiting."""
    clock = Clock()
    admission, refusals = counted(clock)
    await measured(admission, clock, "search", Tier.STANDARD, 1.0, 0.2)
    served: list[str] = []
    release = anyio.Event()
    async with anyio.create_task_group() as tasks:

        async def search(name: str) -> None:
            async with admission.admitted("search", Tier.STANDARD, 1.0):
                served.append(name)
                if name == "running":
                    await release.wait()

        tasks.start_soon(search, "running")
        await until(lambda: served == ["running"])
        tasks.start_soon(search, "queued")
        await until(lambda: len(admission.waiting) == 1)
        clock.now += 0.65
        release.set()
    assert served == ["running", "queued"]
    assert refusals == []


async def test_places_follow_the_event_loop_lag_one_at_a_time() -> None:
    """A loop that runs its timers late (the server's processor is the bottleneck) takes
    places away, one per settling time, down to one; a loop keeping time with calls waiting
    gives them back, up to the ceiling."""
    clock = Clock()
    admission = Admission(4, clock=clock)
    await measured(admission, clock, "query", Tier.DEEP, 40.0, 1.0)
    for _ in range(40):  # 20 ms late, for 4 s
        clock.now += 0.1
        admission.observe_loop_lag(0.020, clock.now)
    assert admission.places == 1
    admission.observe_loop_lag(0.0, clock.now)
    assert admission.places == 1  # not before the lag has come down
    hold = anyio.Event()
    async with anyio.create_task_group() as tasks:

        async def call() -> None:
            async with admission.admitted("query", Tier.DEEP, 40.0):
                await hold.wait()

        tasks.start_soon(call)
        await until(lambda: len(admission.running) == 1)
        tasks.start_soon(call)
        await until(lambda: len(admission.waiting) == 1)
        for _ in range(40):  # on time, with a call waiting
            clock.now += 0.1
            admission.observe_loop_lag(0.0, clock.now)
        assert admission.places == 4
        assert len(admission.running) == 2  # the waiting call got a place given back
        hold.set()


def test_a_loop_a_few_milliseconds_late_takes_a_place_away() -> None:
    """A busy refusal waits for the event loop about twice: a loop running 7 ms late on
    average already holds refusals back, so fewer calls run at once."""
    clock = Clock()
    admission = Admission(4, clock=clock)
    for _ in range(20):  # 7 ms late, for 2 s
        clock.now += 0.1
        admission.observe_loop_lag(0.007, clock.now)
    assert admission.places < 4


# (tool, tier, deadline in seconds) of the calls below, measured at 50 ms each.
SEARCH = ("search", Tier.STANDARD, 1.0)
DEEP_QUERY = ("deep", Tier.DEEP, 40.0)
FAST_LOOKUP = ("fast", Tier.FAST, 10.0)


class NamedCalls:
    """Calls made by name, each holding its place until released, and the order in which
    they were admitted."""

    def __init__(self, admission: Admission, tasks: TaskGroup) -> None:
        self.admission = admission
        self.tasks = tasks
        self.releases: dict[str, anyio.Event] = {}
        self.admitted: list[str] = []
        self.ended = 0

    async def started(self, name: str, call: tuple[str, Tier, float]) -> None:
        """The call made, and admitted."""
        self.make(name, call)
        await until(lambda: name in self.admitted)

    async def queued(self, name: str, call: tuple[str, Tier, float]) -> None:
        """The call made, and waiting."""
        waiting = len(self.admission.waiting)
        self.make(name, call)
        await until(lambda: len(self.admission.waiting) == waiting + 1)

    def make(self, name: str, call: tuple[str, Tier, float]) -> None:
        self.releases[name] = anyio.Event()
        self.tasks.start_soon(self._call, name, *call)

    async def release(self, name: str) -> None:
        """The call ended, its place handed on (or not) to the calls waiting, and any call
        handed one admitted."""
        calls = len(self.admission.running + self.admission.waiting)
        self.releases[name].set()
        self.ended += 1
        await until(
            lambda: (
                len(self.admission.running + self.admission.waiting) == calls - 1
                and len(self.admitted) == len(self.admission.running) + self.ended
            )
        )

    def release_all(self) -> None:
        for release in self.releases.values():
            release.set()

    async def _call(self, name: str, tool: str, tier: Tier, deadline_s: float) -> None:
        async with self.admission.admitted(tool, tier, deadline_s):
            self.admitted.append(name)
            await self.releases[name].wait()


@contextlib.asynccontextmanager
async def named_calls(places: int) -> AsyncIterator[NamedCalls]:
    """Calls by name on `places` places, the three kinds above measured; released at the
    end of the block."""
    clock = Clock()
    admission = Admission(places, clock=clock)
    for tool, tier, deadline_s in (SEARCH, DEEP_QUERY, FAST_LOOKUP):
        await measured(admission, clock, tool, tier, deadline_s, 0.05)
    async with anyio.create_task_group() as tasks:
        calls = NamedCalls(admission, tasks)
        try:
            yield calls
        finally:
            calls.release_all()


def lagging(admission: Admission) -> None:
    """One place taken away, as a loop running its timers late takes it."""
    places = admission.places
    admission.observe_loop_lag(0.1, admission.clock())
    assert admission.places == places - 1


async def test_a_place_taken_away_does_not_slow_the_calls_already_waiting() -> None:
    """A queued call's latest start was foreseen on the places there were: once a lagging
    loop takes one away, it is still served within them, and only a call queued later waits
    for the fewer places."""
    async with named_calls(2) as calls:
        await calls.started("first", SEARCH)
        await calls.started("second", SEARCH)
        await calls.queued("promised", SEARCH)
        lagging(calls.admission)
        await calls.queued("later", SEARCH)
        await calls.release("first")
        assert calls.admitted[-1] == "promised"  # on the two places it was queued on
        await calls.release("second")
        assert "later" not in calls.admitted  # one place now, held by "promised"
        await calls.release("promised")
        assert calls.admitted == ["first", "second", "promised", "later"]


async def test_the_places_promised_to_a_queue_still_go_to_the_most_urgent_tier_first() -> None:
    """A FAST call queued after a place was taken away goes ahead of the DEEP calls queued
    before it, on the places they were promised; DEEP calls keep to their share of the
    places now."""
    async with named_calls(4) as calls:
        for name in ("s1", "s2", "s3", "s4"):
            await calls.started(name, SEARCH)
        await calls.queued("d1", DEEP_QUERY)
        await calls.queued("d2", DEEP_QUERY)
        lagging(calls.admission)
        await calls.queued("fast", FAST_LOOKUP)
        await calls.release("s1")
        assert calls.admitted[-1] == "fast"
        await calls.release("s2")
        assert calls.admitted[-1] == "d1"
        await calls.release("s3")
        assert "d2" not in calls.admitted  # DEEP's share of three places is one, d1's
        await calls.release("d1")
        assert calls.admitted[-1] == "d2"


async def test_a_deep_call_held_back_by_its_share_holds_no_promised_places_up() -> None:
    """A DEEP call queued before a place was taken away, but held back by DEEP's share of
    the places, does not keep the queue on the places it was promised: a call queued after
    the cut waits for the fewer places."""
    async with named_calls(4) as calls:
        for name, call in (("d1", DEEP_QUERY), ("d2", DEEP_QUERY), ("s1", SEARCH), ("s2", SEARCH)):
            await calls.started(name, call)
        await calls.queued("d3", DEEP_QUERY)
        lagging(calls.admission)
        await calls.queued("later", SEARCH)
        await calls.release("s1")
        # d3 is held back (two DEEP calls run, DEEP's share of three places is one), so the
        # queue is served on three places, which the three running calls fill.
        assert "later" not in calls.admitted
        await calls.release("s2")
        assert calls.admitted[-1] == "later"


async def test_a_call_whose_place_comes_too_late_is_refused_saying_how_long_it_waited() -> None:
    clock = Clock()
    admission, refusals = counted(clock)
    await measured(admission, clock, "search", Tier.STANDARD, 1.0, 0.2)
    release = anyio.Event()
    refused: list[MemoryBusyError] = []
    async with anyio.create_task_group() as tasks:

        async def running() -> None:
            async with admission.admitted("search", Tier.STANDARD, 1.0):
                await release.wait()

        async def queued() -> None:
            try:
                async with admission.admitted("search", Tier.STANDARD, 1.0):
                    pytest.fail("ran a call past its latest start")
            except MemoryBusyError as exc:
                refused.append(exc)

        tasks.start_soon(running)
        await until(lambda: len(admission.running) == 1)
        tasks.start_soon(queued)
        await until(lambda: len(admission.waiting) == 1)
        clock.now += 0.8  # past its latest start: 900 ms to finish by, 200 to run
        release.set()
    [exc] = refused
    assert exc.waited_ms == 800
    assert refusals == [(Tier.STANDARD, False)]


async def test_an_estimate_left_too_high_is_measured_again_by_one_call_after_refusing_a_while() -> (
    None
):
    clock = Clock()
    admission, refusals = counted(clock)
    await measured(admission, clock, "other", Tier.STANDARD, 1.0, 0.3)
    # A slow spell left the query's estimate far above what it takes now (50 ms).
    admission.times[("query", Tier.STANDARD)] = ServiceTime(mean=0.4, deviation=0.15)

    def refused_now() -> bool:
        return admission.refused_on_arrival("query", Tier.STANDARD, 1.0) is not None

    release_other = anyio.Event()
    served: list[str] = []
    async with anyio.create_task_group() as tasks:

        async def other() -> None:
            async with admission.admitted("other", Tier.STANDARD, 1.0):
                await release_other.wait()

        async def query(name: str) -> None:
            async with admission.admitted("query", Tier.STANDARD, 1.0):
                served.append(name)
                clock.now += 0.05

        tasks.start_soon(other)
        await until(lambda: len(admission.running) == 1)
        # Its upper bound (0.7 s) behind the running call cannot fit: refused, at the door
        # and at the gate, as long as the estimate has not refused for STALE_AFTER_S.
        assert refused_now()
        with pytest.raises(MemoryBusyError):
            await query("refused")
        clock.now += STALE_AFTER_S - 0.01
        assert refused_now()
        clock.now += 0.01
        # Now one call may measure it again: it fits on the estimate's mean, and waits.
        assert not refused_now()
        tasks.start_soon(query, "probe")
        await until(lambda: len(admission.waiting) == 1)
        # One at a time: another call of the kind is refused while the probe is out.
        assert refused_now()
        with pytest.raises(MemoryBusyError):
            await query("second")
        release_other.set()
    assert served == ["probe"]
    # What the probe measured replaced the estimate: the query fits again.
    estimate = admission.times[("query", Tier.STANDARD)]
    assert estimate.mean == pytest.approx(0.05) and estimate.refusing_since is None
    assert admission.refused_on_arrival("query", Tier.STANDARD, 1.0) is None
    assert all(tier is Tier.STANDARD for tier, _ in refusals)


async def test_a_refusal_says_to_retry_once_the_calls_ahead_of_it_are_served() -> None:
    """Not when it would just have fitted: by then the calls that came meanwhile fill the
    queue again, and a client told 10 ms comes back to be refused again and again."""
    clock = Clock()
    admission, _ = counted(clock)
    await measured(admission, clock, "search", Tier.STANDARD, 1.0, 0.2)
    async with held(admission, 2):
        assert (len(admission.running), len(admission.waiting)) == (1, 1)
        # 400 ms of work ahead (the running call and the queued one): it would just have
        # fitted with a few ms less of it, but is told to come back once all of it is done.
        with pytest.raises(MemoryBusyError) as refused:
            async with admission.admitted("search", Tier.STANDARD, 1.0):
                pytest.fail("admitted past the deadline's share")
        assert refused.value.retry_after_ms == pytest.approx(400, abs=5)
        assert admission.refused_on_arrival("search", Tier.STANDARD, 1.0) == pytest.approx(
            400, abs=5
        )
