"""What the server has been doing, for Prometheus: calls, errors and latency per tool or
resource, tier and campaign; the pool; whether memory is degraded; live subscriptions.

One registry per server process (not prometheus_client's global one), so every HTTP app
and every test has its own counts.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum

import asyncpg
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from glyphoxa_mcp.db.database import Database

CONTENT_TYPE = CONTENT_TYPE_LATEST
# A `_created` twin of every series doubles the page for a timestamp nobody charts.
disable_created_metrics()  # type: ignore[no-untyped-call]
# The tiers' deadlines (150 ms, 1 s, 4 s) fall on bucket edges.
LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
LABELS = ("kind", "name", "tier", "campaign")


class Outcome(StrEnum):
    OK = "ok"
    ERROR = "error"
    REFUSED = "refused"  # a tool the tier does not offer
    DEADLINE = "deadline"  # cancelled at its deadline
    BUSY = "busy"  # refused by admission control, nothing run
    UNAVAILABLE = "unavailable"  # the guard has seen the database fail
    BAD_ARGUMENT = "bad_argument"
    INTERNAL = "internal"


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self._calls = Counter(
            "glyphoxa_calls",
            "Tool calls and resource reads answered.",
            LABELS,
            registry=self.registry,
        )
        self._errors = Counter(
            "glyphoxa_errors",
            "Calls and reads answered with an error, by reason.",
            (*LABELS, "reason"),
            registry=self.registry,
        )
        self._refusals = Counter(
            "glyphoxa_admission_refusals",
            "Tool calls answered 'busy, retry after N ms' (nothing run), by tier and whether at "
            "once or after waiting in the queue longer than foreseen.",
            ("tier", "when"),
            registry=self.registry,
        )
        self._latency = Histogram(
            "glyphoxa_call_seconds",
            "Time to answer a call or read, errors included.",
            LABELS,
            buckets=LATENCY_BUCKETS_S,
            registry=self.registry,
        )

    def refused(self, tier: str, at_once: bool) -> None:
        """A call refused as busy by admission control."""
        self._refusals.labels(tier, "at_once" if at_once else "after_waiting").inc()

    def observe(
        self, kind: str, name: str, tier: str, campaign: str, seconds: float, outcome: Outcome
    ) -> None:
        labels = (kind, name, tier, campaign)
        self._calls.labels(*labels).inc()
        self._latency.labels(*labels).observe(seconds)
        if outcome is not Outcome.OK:
            self._errors.labels(*labels, outcome.value).inc()

    def watch(self, db: Database, subscriptions: Callable[[], int]) -> None:
        """Gauges read when scraped: the pool, the guard's state, the subscriptions."""
        pool = db.pool
        if isinstance(pool, asyncpg.Pool):
            in_use = Gauge(
                "glyphoxa_pool_connections_in_use",
                "Pooled database connections running a statement now.",
                registry=self.registry,
            )
            in_use.set_function(lambda: pool.get_size() - pool.get_idle_size())
            size = Gauge(
                "glyphoxa_pool_connections",
                "Pooled database connections open.",
                registry=self.registry,
            )
            size.set_function(pool.get_size)
        degraded = Gauge(
            "glyphoxa_memory_degraded",
            "1 while the database is not answering (tools say 'memory unavailable').",
            registry=self.registry,
        )
        degraded.set_function(lambda: 0.0 if db.guard.available else 1.0)
        live = Gauge(
            "glyphoxa_subscriptions",
            "Resource subscriptions held by clients.",
            registry=self.registry,
        )
        live.set_function(subscriptions)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
