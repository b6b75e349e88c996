"""Reading an uploaded JSONL file, gzipped, whatever its bytes hold: blank lines only, one huge line,
many tiny records. The block reader evalhub uses (`rows._filled_lines`) and the line-at-a-time reader
it replaced (kept below, as it was), alternated in one run on the same bytes; CPU and wall seconds per
unpacked MB. Issue 78: a 2 MB gzip of blank lines held a request for over 504 s.

    python benchmarks/upload_reading.py                 # 32 MB a shape, 3 rounds
    python benchmarks/upload_reading.py --mb 128        # the default import limit
"""

from __future__ import annotations

import argparse
import gzip
import io
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalhub.core.files import rows  # noqa: E402

BOUND_CPU_S_PER_MB = 0.5  # evalhub's reader, every shape: records cost their parsing (0.25), blank lines 0.03


def line_at_a_time(stream) -> Iterator[tuple[int, str]]:
    """The reader before issue 78: every line through Python, a blank one skipped after it was decoded."""
    for number, line in enumerate(rows._stream_lines(stream), start=1):
        line = line[:-1] if line.endswith("\n") else line
        if line.strip():
            yield number, line


def shapes(mb: int) -> dict[str, bytes]:
    size = mb << 20
    tiny = b'{"prompt_id": 1}\n'
    return {
        "blank lines": b"\n" * size,
        "one huge line": b'{"a": "' + b"x" * (size - 10) + b'"}\n',
        "tiny records": tiny * (size // len(tiny)),
    }


def read(reader, packed: bytes) -> int:
    _, stream = rows.unpacked_stream("upload.jsonl.gz", io.BytesIO(packed), 1 << 40)
    return sum(1 for _ in rows._read_jsonl(reader(stream), ()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    missed = []
    for shape, raw in shapes(args.mb).items():
        packed = gzip.compress(raw, compresslevel=6)
        times: dict[str, list[tuple[float, float]]] = {"block": [], "line at a time": []}
        counts = {}
        for _ in range(args.repeats):
            for side, reader in (("block", rows._filled_lines), ("line at a time", line_at_a_time)):
                wall, cpu = time.perf_counter(), time.process_time()
                counts[side] = read(reader, packed)
                times[side].append((time.perf_counter() - wall, time.process_time() - cpu))
        if counts["block"] != counts["line at a time"]:
            raise SystemExit(f"{shape}: the two readers read {counts} records")
        print(
            f"{shape}: {len(raw) / 2**20:.0f} MB unpacked ({len(packed):,} bytes gzipped), {counts['block']:,} records"
        )
        for side, pairs in times.items():
            cpu = statistics.median(c for _, c in pairs) / (len(raw) / 2**20)
            wall = statistics.median(w for w, _ in pairs) / (len(raw) / 2**20)
            print(f"  {side:15s} {cpu:.4f} CPU-s/MB   {wall:.4f} wall-s/MB")
            if side == "block" and cpu > BOUND_CPU_S_PER_MB:
                missed.append(shape)
    if missed:
        raise SystemExit(f"over {BOUND_CPU_S_PER_MB} CPU-s a MB: {', '.join(missed)}")


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
