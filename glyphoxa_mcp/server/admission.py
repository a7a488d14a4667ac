"""Admission control: a call the server cannot answer within its tier's deadline is told
"busy, retry after N ms" at once, instead of queueing until its deadline cancels it.

Every tool call of a process passes one `Admission` (all viewers and tiers share the
database, so they share the queue). At most `concurrency` calls run at once; the rest wait
in one queue, FAST before STANDARD before DEEP, first come first served within a tier, and
DEEP calls hold at most half the places, so a FAST call never waits behind a row of DEEP
ones. Whether a call may wait is decided from measured service times (an exponentially
weighted mean and deviation per tool and tier, as TCP estimates a round trip) by Little's
law: the work ahead of it (the rest of the calls running, the calls queued before it)
divided by the places left to its tier (less the share that calls of earlier tiers have
lately filled, as they will go ahead of it while it waits), plus its own service time, must
fit within a share of its deadline (`ADMIT_SHARE`), counted from when the call reached the
server (server/arrival.py). A call that would not fit is refused at once, told to retry
once the calls ahead of it are served (no sooner than it would fit: told only the latter, a
client comes back to a queue others have filled meanwhile, again and again), and so is a
call of a faster tier that would push a queued one past its latest start (a queued call was
promised its place). The rest of the deadline absorbs a wait
that runs longer than foreseen: only a call that can no longer finish before the answer's way
back (`RETURN_SHARE`) is refused after waiting, before it starts work it could not finish.
Only admitted calls measure, so an estimate that has refused calls for `STALE_AFTER_S` lets
one call of its kind wait if it fits on the estimate's mean, and takes what it measures: a
tool is never refused for good on a measure taken in a slow spell.
The places themselves follow the server's own processor: while the event loop runs its
timers late (every answer and every refusal waits for it), a place is taken away from the
calls queued after that (those queued before were promised their starts on the places there
were), and given back once the loop keeps time with calls waiting. (no database, no MCP)
"""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import anyio

from glyphoxa_mcp.domain.tiers import Tier
from glyphoxa_mcp.errors import MemoryBusyError
from glyphoxa_mcp.server.metrics import Metrics

# Served first: the lower, the sooner.
PRIORITY = {Tier.FAST: 0, Tier.STANDARD: 1, Tier.DEEP: 2}
# The weight of a new sample in the running mean and deviation (TCP's 1/8 and 1/4).
MEAN_GAIN = 0.125
DEVIATION_GAIN = 0.25
# A call's own service time is taken as mean + this many deviations (TCP takes 4).
DEVIATIONS = 2.0
# Of the deadline (counted from the call's arrival), the share its foreseen wait and service
# may fill for it to be let wait: the rest is for what a mean cannot see (a wait that runs
# long, the event loop of a busy machine), so that a call let wait is seldom refused later.
ADMIT_SHARE = 0.6
# The last share of the deadline is the answer's way back to the client: a call runs only if
# it can finish before it (its service time taken at mean + DEVIATIONS deviations).
RETURN_SHARE = 0.1
# Before any call of a tool and tier is measured, its service time is taken as this share of
# its deadline.
UNMEASURED_SHARE = 0.25
# Places by default: a few calls per core keep both the database and the server busy
# without each call's share of the processors shrinking (2 cores: 4).
CALLS_PER_CPU = 2
# The pool a server is taken to have (Database.open's default).
DEFAULT_POOL_SIZE = 10
# The least wait foreseen for a call that has to queue.
QUEUED_AT_LEAST_S = 0.001
# Over how many seconds the work each tier brings is averaged, to foresee what will go ahead
# of a waiting call of a later tier.
ARRIVALS_WINDOW_S = 2.0
# The most of the places the earlier tiers are taken to fill: the rest is always served.
MAX_EARLIER_SHARE = 0.9
# The event loop's lag (how late it runs a timer) above which the server's own processor is
# taken to be the bottleneck; the probe's period; the weight of a new measure; and how long
# a change to the places is given to show before the next. A busy refusal passes the loop
# about twice (its request read, its answer written). Kept under 10 ms on average, the loop
# ran its timers 32-37 ms late at p99 under 64 clients; under 5 ms, 20-32 ms, and refusals
# came a quarter sooner at the median and a fifth at p95, while 94-105 calls a second were
# answered in time (103-104 at 10 ms) and 10-25% more calls were refused (BENCHMARKS.md,
# issue 28).
LAG_TARGET_S = 0.005
LAG_PROBE_S = 0.05
LAG_GAIN = 0.25
PLACES_SETTLE_S = 0.5
# An estimate that has refused calls for this long without being measured again may be out
# of date: refusals alone never correct one that a slow spell (a pause of the whole process,
# a cold cache) left too high, and its tool would be refused for good while the others are
# served. So then one call of its kind at a time is let wait if it can finish in time on the
# estimate's mean, and what that call measures replaces the estimate (as a first measure
# would).
STALE_AFTER_S = 1.0
# Bounds of the retry hint.
RETRY_MIN_MS = 10
RETRY_MAX_MS = 10_000


@dataclass
class ServiceTime:
    """A running estimate of one kind of call's service time, in seconds."""

    mean: float
    deviation: float
    # Since when it has refused calls without a measure (the admission's clock).
    refusing_since: float | None = None
    # A call let in to measure it again (STALE_AFTER_S) is waiting or running.
    probing: bool = False

    def add(self, sample: float, *, probe: bool = False) -> None:
        if probe:
            # TCP's first measure of a round trip: the old estimate is not worth averaging.
            self.mean, self.deviation = sample, sample / 2
        else:
            self.deviation += DEVIATION_GAIN * (abs(sample - self.mean) - self.deviation)
            self.mean += MEAN_GAIN * (sample - self.mean)
        self.refusing_since = None

    def refused(self, now: float) -> None:
        if self.refusing_since is None:
            self.refusing_since = now

    def may_probe(self, now: float) -> bool:
        """Whether a call may be let in to measure this estimate again."""
        since = self.refusing_since
        return not self.probing and since is not None and now - since >= STALE_AFTER_S

    @property
    def upper(self) -> float:
        return self.mean + DEVIATIONS * self.deviation


@dataclass(eq=False)
class Ticket:
    """One call's place: while waiting, in the queue; once admitted, among the running."""

    key: tuple[str, Tier]
    tier: Tier
    arrived: float
    deadline_s: float
    order: int
    admitted: anyio.Event = field(default_factory=anyio.Event)
    started: float | None = None
    # Once queued: the places there were to serve the queue; a place taken away later does
    # not slow the calls already waiting (their latest starts were foreseen with these).
    places: int = 0
    # Once queued: the latest start from which it may still finish in time, on average. A
    # queued call is a promise: no later call may go ahead of it so far as to break it.
    latest_start: float = math.inf

    def remaining_s(self, now: float) -> float:
        """What is left of the deadline."""
        return self.deadline_s - (now - self.arrived)


class Admission:
    def __init__(
        self,
        concurrency: int,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_refused: Callable[[Tier, bool], None] = lambda _tier, _at_once: None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1; got {concurrency}")
        self.concurrency = concurrency
        # The places given now: fewer than `concurrency` while the event loop lags (the
        # server's own processor is the bottleneck, and every answer and refusal waits on it).
        self.places = concurrency
        self.loop_lag_s = 0.0
        self._places_changed = clock()
        self.clock = clock
        self.running: list[Ticket] = []
        self.waiting: list[Ticket] = []
        self.times: dict[tuple[str, Tier], ServiceTime] = {}
        # Per tier, the service time its calls brought per second lately (a decaying sum),
        # and when that was last brought up to date.
        self.arriving: dict[Tier, tuple[float, float]] = {}
        self._order = itertools.count()
        # Refusals so far: at once (on arrival), and after waiting (the wait ran long).
        self.refused_at_once = 0
        self.refused_after_waiting = 0
        # Told of each refusal: the tier, and whether at once (else after waiting).
        self.on_refused = on_refused

    def observe_loop_lag(self, lag_s: float, now: float) -> None:
        """One measure of how late the event loop ran a timer: past `LAG_TARGET_S` on
        average, a place is taken away (the calls running take the processor every request
        waits for, refusals included); well under it with calls waiting, one is given back.
        At most one change per `PLACES_SETTLE_S`, so each is seen before the next."""
        self.loop_lag_s += LAG_GAIN * (lag_s - self.loop_lag_s)
        if now - self._places_changed < PLACES_SETTLE_S:
            return
        if self.loop_lag_s > LAG_TARGET_S and self.places > 1:
            self.places -= 1
            self._places_changed = now
        elif self.loop_lag_s < LAG_TARGET_S / 2 and self.places < self.concurrency and self.waiting:
            self.places += 1
            self._places_changed = now
            self._hand_on()

    async def watch_loop(self) -> None:
        """Measure the event loop's lag for as long as the server runs."""
        while True:
            asked = time.monotonic()
            await anyio.sleep(LAG_PROBE_S)
            self.observe_loop_lag(time.monotonic() - asked - LAG_PROBE_S, self.clock())

    def limit(self, tier: Tier) -> int:
        """Places a tier's calls may hold at once."""
        return max(1, self.places // 2) if tier is Tier.DEEP else self.places

    def service(self, tool: str, tier: Tier, deadline_s: float) -> ServiceTime:
        estimate = self.times.get((tool, tier))
        if estimate is None:
            guess = deadline_s * UNMEASURED_SHARE
            estimate = self.times[(tool, tier)] = ServiceTime(guess, guess / 2)
        return estimate

    def expected_wait_s(self, ticket: Ticket, now: float) -> float:
        """By Little's law: the work ahead of `ticket` (what is left of the running calls,
        the calls queued before it) spread over the places, less the share of them that the
        calls of earlier tiers arriving meanwhile will take (they go ahead); 0 with a place
        free for it."""
        ahead = [w for w in self.waiting if w is not ticket and _before(w, ticket)]
        if not ahead and self._free_for(ticket.tier):
            return 0.0
        left = sum(
            max(self.times[r.key].mean - (now - (r.started or now)), 0.0) for r in self.running
        )
        queued = sum(self.times[w.key].mean for w in ahead)
        places = self.places * (1.0 - self.earlier_share(ticket.tier, now))
        # Never 0 without a free place: 0 means "start now".
        return max((left + queued) / places, QUEUED_AT_LEAST_S)

    def earlier_share(self, tier: Tier, now: float) -> float:
        """The share of the places that calls of the tiers served before `tier` have lately
        filled: a waiting call of `tier` is served in the rest."""
        work = sum(
            self._arriving_work(earlier, now)
            for earlier in PRIORITY
            if PRIORITY[earlier] < PRIORITY[tier]
        )
        return min(work / self.places, MAX_EARLIER_SHARE)

    def _arriving_work(self, tier: Tier, now: float) -> float:
        """The service time the tier's calls have brought per second lately."""
        rate, since = self.arriving.get(tier, (0.0, now))
        return rate * math.exp(-(now - since) / ARRIVALS_WINDOW_S)

    def _arrives(self, tier: Tier, service_s: float, now: float) -> None:
        rate = self._arriving_work(tier, now) + service_s / ARRIVALS_WINDOW_S
        self.arriving[tier] = (rate, now)

    def _free_for(self, tier: Tier, places: int | None = None) -> bool:
        """Whether a call of `tier` may start now, within `places` in all (by default the
        places now), and a DEEP call within DEEP's share of the places now."""
        if len(self.running) >= (self.places if places is None else places):
            return False
        return tier is not Tier.DEEP or not self._deep_share_taken()

    def _deep_share_taken(self) -> bool:
        return sum(r.tier is Tier.DEEP for r in self.running) >= self.limit(Tier.DEEP)

    @contextlib.asynccontextmanager
    async def admitted(
        self, tool: str, tier: Tier, deadline_s: float, *, waited_s: float = 0.0
    ) -> AsyncIterator[Ticket]:
        """A place for one call of `tool` within `deadline_s` of its arrival, `waited_s` ago
        (the HTTP and MCP layers' share), held while the block runs; raises
        `MemoryBusyError` (nothing run) when the call cannot be answered in time."""
        now = self.clock()
        own = self.service(tool, tier, deadline_s)
        ticket = Ticket((tool, tier), tier, now - waited_s, deadline_s, next(self._order))
        self._arrives(tier, own.mean, now)
        wait = self.expected_wait_s(ticket, now)
        retry_s = self._refusal_s(ticket, own, wait, now)
        probe = retry_s is not None and self._probes(ticket, own, wait, now)
        if retry_s is not None and not probe:
            own.refused(now)
            self._refuse(tier, at_once=True)
            raise MemoryBusyError(_retry_ms(retry_s))
        own.probing = own.probing or probe
        try:
            async with self._place(ticket, own, wait, now, probe=probe):
                yield ticket
        finally:
            if probe:
                own.probing = False

    @contextlib.asynccontextmanager
    async def _place(
        self, ticket: Ticket, own: ServiceTime, wait: float, now: float, *, probe: bool
    ) -> AsyncIterator[None]:
        """The place of an admitted call: at once, or once the calls ahead leave it one. A
        probe's latest start is taken from the estimate's mean, the rest of it being what
        the probe is to measure again."""
        tier, deadline_s = ticket.tier, ticket.deadline_s
        finish_by = deadline_s * (1.0 - RETURN_SHARE)
        if wait == 0:
            self._start(ticket, now)
        else:
            service = own.mean if probe else own.upper
            ticket.latest_start = ticket.arrived + finish_by - service
            ticket.places = self.places
            self.waiting.append(ticket)
            try:
                with anyio.move_on_after(ticket.latest_start - now):
                    await ticket.admitted.wait()
            except BaseException:  # the call was cancelled while it waited
                self._abandon(ticket)
                raise
            if ticket.started is None:
                self._abandon(ticket)
                ended = self.clock()
                own.refused(ended)
                self._refuse(tier, at_once=False)
                raise MemoryBusyError(
                    _retry_ms(self.expected_wait_s(ticket, ended)),
                    waited_ms=round((ended - now) * 1000),
                )
        try:
            yield
        finally:
            end = self.clock()
            self.running.remove(ticket)
            assert ticket.started is not None
            own.add(end - ticket.started, probe=probe)
            self._hand_on()

    def refused_on_arrival(
        self, tool: str, tier: Tier, deadline_s: float, *, waited_s: float = 0.0
    ) -> int | None:
        """The retry hint (ms) if a call arriving now would be refused at once, counted as
        refused; None if it may go on to `admitted`. For a door in front of the layers that
        lead to `admitted`, so that a refusal costs the server little."""
        now = self.clock()
        own = self.service(tool, tier, deadline_s)
        ticket = Ticket((tool, tier), tier, now - waited_s, deadline_s, next(self._order))
        wait = self.expected_wait_s(ticket, now)
        retry_s = self._refusal_s(ticket, own, wait, now)
        if retry_s is None or self._probes(ticket, own, wait, now):
            return None
        own.refused(now)
        self._refuse(tier, at_once=True)
        return _retry_ms(retry_s)

    def _refusal_s(self, ticket: Ticket, own: ServiceTime, wait: float, now: float) -> float | None:
        """After how long a call that cannot be answered in time should retry, or None if it
        can: waiting `wait`, then served in `own` time. A call refused for its wait retries
        once the work ahead of it is done, not as soon as it would just fit."""
        waited_s = now - ticket.arrived
        finish_by = ticket.deadline_s * (1.0 - RETURN_SHARE)
        if wait == 0:
            # A free place: refused only if the time spent reaching the gate leaves it too
            # little to finish. A tool whose measure says it can hardly finish in any case
            # is still let try while it has half the time (its measure can only mend so).
            over = waited_s + min(own.mean, finish_by / 2) - finish_by
        else:
            over = waited_s + wait + own.upper - ticket.deadline_s * ADMIT_SHARE
        if over > 0:
            return max(over, wait)
        if self._breaks_a_promise(ticket, own.mean, now):
            return wait + own.mean
        return None

    def _probes(self, ticket: Ticket, own: ServiceTime, wait: float, now: float) -> bool:
        """Whether a call its estimate would refuse is let in to measure it again: the
        estimate is out of date (STALE_AFTER_S), the call can finish in time on its mean,
        and it breaks no queued call's promise (that refusal is not the estimate's)."""
        finish_by = ticket.deadline_s * (1.0 - RETURN_SHARE)
        return (
            own.may_probe(now)
            and (now - ticket.arrived) + wait + own.mean <= finish_by
            and not self._breaks_a_promise(ticket, own.mean, now)
        )

    def _breaks_a_promise(self, ticket: Ticket, service_s: float, now: float) -> bool:
        """Whether `ticket`, served before calls already queued (a faster tier), would push
        one of them past its latest start: the queued call was promised its place, so the
        newcomer is refused at once rather than the queued call after waiting."""
        behind = sorted(
            (w for w in self.waiting if _before(ticket, w)),
            key=lambda w: (PRIORITY[w.tier], w.order),
        )
        if not behind:
            return False
        left = sum(
            max(self.times[r.key].mean - (now - (r.started or now)), 0.0) for r in self.running
        )
        work = (
            left
            + service_s
            + sum(self.times[w.key].mean for w in self.waiting if _before(w, ticket))
        )
        for queued in behind:
            if now + work / self.places > queued.latest_start:
                return True
            work += self.times[queued.key].mean
        return False

    def _start(self, ticket: Ticket, now: float) -> None:
        ticket.started = now
        self.running.append(ticket)

    def _abandon(self, ticket: Ticket) -> None:
        """A call gives up its place in the queue, or one handed to it as it gave up."""
        if ticket in self.waiting:
            self.waiting.remove(ticket)
        elif ticket in self.running:
            self.running.remove(ticket)
        self._hand_on()

    def _hand_on(self) -> None:
        """Free places to the waiting calls, the most urgent tier first; a call past its
        latest start is woken to be refused, not handed a place it could not use in time.
        While a call queued before a place was taken away still waits, the queue is served
        on the places that call was promised (in tier order all the same: a FAST call
        queued since goes first); each tier's share follows the places now."""
        now = self.clock()
        for late in [w for w in self.waiting if now > w.latest_start]:
            self.waiting.remove(late)
            late.admitted.set()
        places = self._promised_places()
        for ticket in sorted(self.waiting, key=lambda w: (PRIORITY[w.tier], w.order)):
            if len(self.running) >= places:
                return
            if self._free_for(ticket.tier, places):
                self.waiting.remove(ticket)
                self._start(ticket, now)
                ticket.admitted.set()
                places = self._promised_places()

    def _promised_places(self) -> int:
        """The most places a waiting call that could start now was queued on, and at least
        the places now. A DEEP call held back by DEEP's share holds no places up for the
        calls queued after it."""
        deep_held_back = self._deep_share_taken()
        return max(
            [
                self.places,
                *(w.places for w in self.waiting if not (deep_held_back and w.tier is Tier.DEEP)),
            ]
        )

    def _refuse(self, tier: Tier, *, at_once: bool) -> None:
        if at_once:
            self.refused_at_once += 1
        else:
            self.refused_after_waiting += 1
        self.on_refused(tier, at_once)


def default_concurrency(pool_size: int = DEFAULT_POOL_SIZE) -> int:
    """Places for a server on this machine whose pool holds `pool_size` connections."""
    return max(1, min(pool_size, CALLS_PER_CPU * (os.cpu_count() or 1)))


def admission_for(metrics: Metrics | None = None) -> Admission:
    """A process's admission control, its refusals counted in `metrics`."""
    if metrics is None:
        return Admission(default_concurrency())
    return Admission(
        default_concurrency(),
        on_refused=lambda tier, at_once: metrics.refused(tier.value, at_once),
    )


def _before(queued: Ticket, ticket: Ticket) -> bool:
    """Whether `queued` will be served before `ticket`."""
    return (PRIORITY[queued.tier], queued.order) < (PRIORITY[ticket.tier], ticket.order)


def _retry_ms(seconds: float) -> int:
    return min(max(math.ceil(seconds * 1000), RETRY_MIN_MS), RETRY_MAX_MS)
