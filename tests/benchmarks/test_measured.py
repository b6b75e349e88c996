"""The benchmarks' own honesty: each run says how busy the machine was and what CPU it spent, so that a
slow figure measured beside another job cannot be read as the code's (the scale issue's item 5)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def measured():
    spec = importlib.util.spec_from_file_location("benchmarks_measured", BENCHMARKS / "measured.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


BURN = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"


def test_a_run_is_reported_with_the_load_at_both_ends_and_the_cpu_its_children_spent(capsys):
    with measured().reported():
        subprocess.run([sys.executable, "-c", BURN], check=True)
    start, end = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"start: \d+ cores; load average [\d.]+ [\d.]+ [\d.]+", start)
    found = re.fullmatch(r"end: \d+ cores; load average [\d.]+ [\d.]+ [\d.]+; run wall ([\d.]+) s, CPU ([\d.]+) s", end)
    assert found and float(found[2]) >= 0.3  # the child's CPU is counted, not only this process's


def test_a_run_that_misses_its_bound_still_prints_its_end_line(capsys):
    with pytest.raises(SystemExit), measured().reported():
        sys.exit(1)
    assert capsys.readouterr().out.splitlines()[-1].startswith("end: ")


@pytest.mark.parametrize(
    "script", sorted(p.name for p in BENCHMARKS.glob("*.py") if 'if __name__ == "__main__":' in p.read_text())
)
def test_every_benchmark_script_runs_inside_a_report(script):
    text = (BENCHMARKS / script).read_text()
    assert "with reported():" in text.split('if __name__ == "__main__":', 1)[1], script
