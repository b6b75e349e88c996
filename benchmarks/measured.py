"""Measuring one call honestly: in a forked child, wall and CPU time with nothing traced inside the timed
region, and the memory the call added to the process (its peak resident set, from the kernel) rather
than what a tracer sees of numpy's allocations; and a line saying how busy the machine was.

tracemalloc inside a timed region slowed a Bradley–Terry board fourfold (5.16 s reported for 1.19 s)
and counted numpy's arrays only, not the process's memory.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Measured:
    wall_s: float
    cpu_s: float
    added_mib: float  # peak resident memory during the call minus the resident memory before it
    result: Any  # the call's value, or the MemoryError it raised


def _resident_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1])


def _child(run: Callable[[], object], pipe) -> None:
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # resets the peak resident set (VmHWM) to the current one (Linux)
    before = _resident_kib("VmRSS")
    wall, cpu = time.perf_counter(), time.process_time()
    try:
        result: object = run()
    except MemoryError as error:
        result = error
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    pipe.send(Measured(wall, cpu, (_resident_kib("VmHWM") - before) / 1024, result))
    pipe.close()


def in_child(run: Callable[[], object]) -> Measured:
    """`run()` measured in a forked child (it sees this process's data as it is), its result sent back."""
    context = multiprocessing.get_context("fork")
    receiving, sending = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(run, sending))
    child.start()
    sending.close()
    measured = receiving.recv()
    child.join()
    return measured


def machine() -> str:
    """Cores this process may use and the load averages (1, 5, 15 minutes) when it was asked."""
    one, five, fifteen = os.getloadavg()
    return f"{len(os.sched_getaffinity(0))} cores; load average {one:.2f} {five:.2f} {fifteen:.2f}"


CPU_FIELDS = ("user", "system", "children_user", "children_system")


@contextlib.contextmanager
def reported() -> Iterator[None]:
    """A whole benchmark run between two lines: how busy the machine was at its start and its end, and
    the run's wall and CPU time (this process and the children it waited for), so that no figure it
    prints can be read without the load it was measured under. The end line is printed when the run
    exits early too (a bound missed)."""
    print(f"start: {machine()}", flush=True)
    wall, before = time.perf_counter(), os.times()
    try:
        yield
    finally:
        after = os.times()
        cpu = sum(getattr(after, field) - getattr(before, field) for field in CPU_FIELDS)
        print(f"end: {machine()}; run wall {time.perf_counter() - wall:.1f} s, CPU {cpu:.1f} s", flush=True)


def sides_compared(seen: dict[str, list[tuple[float, float]]], before: str, after: str) -> float:
    """Print each side's median wall and CPU seconds over its interleaved runs (`seen`: side → [(wall,
    CPU)]); the ratio of `before`'s median CPU to `after`'s."""
    width = max(len(side) for side in seen)
    for side, values in seen.items():
        walls, cpus = [w for w, _ in values], [c for _, c in values]
        print(f"{side:>{width}}: median {statistics.median(walls):.2f} s wall, {statistics.median(cpus):.2f} CPU-s")
    return statistics.median(c for _, c in seen[before]) / statistics.median(c for _, c in seen[after])
