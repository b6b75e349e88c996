"""A call's place under the shared provider limits: CPU and wall per call, two ways side by side.

Every model call a worker makes with REDIS_URL set first takes an in-flight slot in Redis and checks
the pause every worker shares (a 429's Retry-After), and gives the slot back after. `turn` reads the
pause in the round trip that takes the slot (two round trips a call); `slot` then `wait_for_rate`
read it in one of its own (three: how calls took their place before issue 79's last stop). Rounds of
the two alternate in one process against one Redis; each round runs `--calls` places at once, as a
worker streaming a hundred debates does.

    REDIS_URL=redis://127.0.0.1:6379/0 python benchmarks/limits_round_trips.py --rounds 6 --calls 3000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalhub.llm.shared_limits import SharedLimits  # noqa: E402


async def places(limits: SharedLimits, calls: int, together: bool) -> tuple[float, float]:
    """CPU and wall milliseconds per call's place, for `calls` places taken at once."""

    async def one() -> None:
        if together:
            async with limits.turn(calls, None):
                pass
        else:
            async with limits.slot(calls):
                await limits.wait_for_rate(None)

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one() for _ in range(calls)))
    return 1000 * (time.process_time() - cpu) / calls, 1000 * (time.perf_counter() - wall) / calls


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=6, help="rounds of each way, alternated")
    parser.add_argument("--calls", type=int, default=3000, help="places taken at once in a round")
    args = parser.parse_args()
    url = os.environ.get("REDIS_URL", "")
    if not url:
        sys.exit("Set REDIS_URL: the shared limits live in Redis.")
    limits = SharedLimits(url, "openai", "bench", secrets.token_hex(8))
    await places(limits, 200, True)  # the connections and scripts loaded
    await places(limits, 200, False)
    results: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for _ in range(args.rounds):
        for together in (False, True):
            results[together].append(await places(limits, args.calls, together))
    for together, label in ((False, "slot, then the pause (3 round trips)"), (True, "turn (2 round trips)")):
        cpu = [c for c, _ in results[together]]
        wall = [w for _, w in results[together]]
        print(
            f"{label:<40} CPU per call {statistics.median(cpu):.3f} ms (rounds {min(cpu):.3f}–{max(cpu):.3f}), "
            f"wall {statistics.median(wall):.3f} ms"
        )
    await limits.aclose()


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        asyncio.run(main())
