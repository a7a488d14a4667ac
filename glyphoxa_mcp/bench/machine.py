"""The machine a benchmark ran on, for the record beside its figures."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from pydantic import BaseModel


class Machine(BaseModel):
    cpus: int
    cpu_model: str
    memory_gib: float
    system: str
    python: str
    # 1-minute load average when measuring began (and ended, once known): other work on the
    # machine skews the figures.
    load_average: float
    load_average_end: float | None = None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gib() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return 0.0


def this_machine() -> Machine:
    return Machine(
        cpus=len(os.sched_getaffinity(0))
        if hasattr(os, "sched_getaffinity")
        else os.cpu_count() or 0,
        cpu_model=_cpu_model(),
        memory_gib=_memory_gib(),
        system=f"{platform.system()} {platform.release()}",
        python=platform.python_version(),
        load_average=round(os.getloadavg()[0], 2),
    )
