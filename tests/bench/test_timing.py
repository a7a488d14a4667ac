from __future__ import annotations

import time

import pytest

from glyphoxa_mcp.bench.cpu import CpuMeter
from glyphoxa_mcp.bench.timing import (
    Operation,
    measure,
    measure_together,
    percentile,
    summarise,
)


def test_percentiles_interpolate_between_ranks() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == pytest.approx(50.5)
    assert percentile(values, 0.95) == pytest.approx(95.05)
    assert percentile(values, 0.0) == 1.0 and percentile(values, 1.0) == 100.0
    assert percentile([7.0], 0.99) == 7.0


def test_a_summary_orders_its_samples_first() -> None:
    summary = summarise([3.0, 1.0, 2.0])
    assert (summary.samples, summary.min_ms, summary.p50_ms, summary.max_ms) == (3, 1.0, 2.0, 3.0)
    assert summary.mean_ms == 2.0


async def test_measuring_calls_warmup_then_samples_with_rising_numbers() -> None:
    seen: list[int] = []

    async def async_call(number: int) -> None:
        seen.append(number)

    timed = await measure(Operation("async", async_call), samples=5, warmup=2)
    assert seen == [0, 1, 2, 3, 4, 5, 6] and len(timed.around) == 5
    assert timed.reported is None
    plain: list[int] = []
    await measure(Operation("sync", plain.append), samples=3, warmup=0)
    assert plain == [0, 1, 2]


async def test_durations_the_calls_report_are_summarised_beside_the_measured_ones() -> None:
    timed = await measure(Operation("reports", lambda n: float(n)), samples=3, warmup=1)
    assert timed.reported == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="some calls only"):
        await measure(Operation("sometimes", lambda n: 1.0 if n else None), samples=2, warmup=0)


async def test_operations_measured_together_take_turns_with_the_same_arguments() -> None:
    calls: list[tuple[str, int]] = []

    def taking(name: str) -> Operation:
        return Operation(name, lambda number: calls.append((name, number)))

    here, there = await measure_together([taking("a"), taking("b")], samples=2, warmup=1)
    assert calls == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    assert len(here.around) == len(there.around) == 2


def test_nothing_to_summarise_is_an_error() -> None:
    with pytest.raises(ValueError, match="no values"):
        summarise([])


def _burn(ms: float) -> None:
    until = time.process_time() + ms / 1000
    while time.process_time() < until:
        pass


async def test_cpu_is_summed_over_the_timed_calls_and_charged_to_each_operation_alone() -> None:
    meter = CpuMeter("bench", {})
    burner = Operation("burns", lambda number: _burn(10))
    timed = await measure(burner, samples=4, warmup=3, cpu=meter)
    assert timed.cpu_ms is not None
    # The four timed calls, not the warm-up: 40 ms and what the calls themselves add.
    assert 40 <= (timed.cpu_ms["bench"] or 0) < 40 + 10
    burning, idle = await measure_together(
        [burner, Operation("idles", lambda number: None)], samples=3, warmup=1, cpu=meter
    )
    assert burning.cpu_ms is not None and idle.cpu_ms is not None
    assert 30 <= (burning.cpu_ms["bench"] or 0) < 30 + 10
    assert (idle.cpu_ms["bench"] or 0) < 2
    assert (await measure(burner, samples=1, warmup=0)).cpu_ms is None
