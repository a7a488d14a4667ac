"""Timing one operation many times, and its percentiles."""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from glyphoxa_mcp.bench.cpu import CpuMeter, add_ms, spent_ms

# A measured call: given the sample's number (to rotate through its arguments), do the
# operation once; async or not. It may return how long the work took in milliseconds, as
# measured closer to the work than around the call (inside the server).
Call = Callable[[int], Awaitable[float | None] | float | None]


@dataclass(frozen=True)
class Operation:
    """Something to time: a name for the table and the call that does it once; and, for an
    operation too slow to repeat as often as the others, its own number of calls."""

    name: str
    call: Call
    samples: int | None = None
    warmup: int | None = None


class Summary(BaseModel):
    """Latency of one operation, in milliseconds."""

    model_config = ConfigDict(frozen=True)

    samples: int
    p50_ms: float
    p95_ms: float
    p99_ms: float
    mean_ms: float
    min_ms: float
    max_ms: float


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default), of sorted values."""
    if not ordered:
        raise ValueError("no values")
    if not 0 <= fraction <= 1:
        raise ValueError(f"fraction must be in [0, 1]; got {fraction}")
    position = (len(ordered) - 1) * fraction
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarise(durations_ms: Sequence[float]) -> Summary:
    ordered = sorted(durations_ms)
    return Summary(
        samples=len(ordered),
        p50_ms=round(percentile(ordered, 0.50), 3),
        p95_ms=round(percentile(ordered, 0.95), 3),
        p99_ms=round(percentile(ordered, 0.99), 3),
        mean_ms=round(sum(ordered) / len(ordered), 3),
        min_ms=round(ordered[0], 3),
        max_ms=round(ordered[-1], 3),
    )


@dataclass(frozen=True)
class Timed:
    """Latency around the calls, and as the calls reported it themselves (if they did), in
    milliseconds, in the order taken; and, when measured with a CPU meter, the CPU
    milliseconds each process it reads spent during the timed calls, all together."""

    around: list[float]
    reported: list[float] | None
    cpu_ms: dict[str, float | None] | None = None


@dataclass(frozen=True)
class _Taken:
    duration_ms: float
    reported_ms: float | None
    cpu_ms: dict[str, float | None] | None


async def _once(call: Call, number: int, cpu: CpuMeter | None = None) -> _Taken:
    # The CPU is read around each call alone, so that calls measured in turn with others
    # (measure_together) are charged only their own.
    opening = cpu.opening() if cpu is not None else None
    started = time.perf_counter_ns()
    result = call(number)
    if inspect.isawaitable(result):
        result = await result
    duration_ms = (time.perf_counter_ns() - started) / 1e6
    spent = spent_ms(opening, cpu.closing()) if cpu is not None and opening is not None else None
    return _Taken(duration_ms, result, spent)


async def measure_together(
    operations: Sequence[Operation], *, samples: int, warmup: int, cpu: CpuMeter | None = None
) -> list[Timed]:
    """Several operations, one call of each in turn (with the same sample number), so that
    they see the same moments of a machine whose load changes: for comparing them, as the
    same call in process and over stdio. Each operation's own counts are ignored."""
    if samples < 1:
        raise ValueError(f"samples must be at least 1; got {samples}")
    for number in range(warmup):
        for operation in operations:
            await _once(operation.call, number)
    timed: list[list[_Taken]] = [[] for _ in operations]
    for number in range(warmup, warmup + samples):
        for position, operation in enumerate(operations):
            timed[position].append(await _once(operation.call, number, cpu))
    return [_timed(operation, taken) for operation, taken in zip(operations, timed, strict=True)]


def _timed(operation: Operation, taken: list[_Taken]) -> Timed:
    reported = [t.reported_ms for t in taken if t.reported_ms is not None]
    if reported and len(reported) != len(taken):
        raise ValueError(f"{operation.name} reported its duration for some calls only")
    cpu_ms = None
    for t in taken:
        if t.cpu_ms is not None:
            cpu_ms = t.cpu_ms if cpu_ms is None else add_ms(cpu_ms, t.cpu_ms)
    return Timed(around=[t.duration_ms for t in taken], reported=reported or None, cpu_ms=cpu_ms)


async def measure(
    operation: Operation, *, samples: int, warmup: int, cpu: CpuMeter | None = None
) -> Timed:
    """Run the operation `warmup` times untimed (connections, caches, lazy loads), then
    `samples` times timed, one after another; the CPU of the processes `cpu` reads is
    summed over the timed calls."""
    samples = operation.samples if operation.samples is not None else samples
    warmup = operation.warmup if operation.warmup is not None else warmup
    if samples < 1:
        raise ValueError(f"samples must be at least 1; got {samples}")
    for number in range(warmup):
        await _once(operation.call, number)
    return _timed(operation, [await _once(operation.call, warmup + n, cpu) for n in range(samples)])
