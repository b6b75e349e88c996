"""A web process computes on one BLAS thread unless told otherwise: the workers and the other web
processes share the cores, and a library pool of a thread per core multiplied a page's CPU."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHOW = (
    "import evalhub.asgi, numpy, threadpoolctl; print(max(i['num_threads'] for i in threadpoolctl.threadpool_info()))"
)
GIVEN = str(min(2, os.cpu_count() or 1))  # a library caps its pool at the cores there are


@pytest.mark.parametrize(("given", "threads"), [(None, "1"), (GIVEN, GIVEN)])
def test_the_web_application_limits_blas_to_one_thread_unless_a_value_is_given(given, threads):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalhub.settings", "SECRET_KEY": "test-only"}
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env.pop(variable, None)
        if given:
            env[variable] = given
    shown = subprocess.run([sys.executable, "-c", SHOW], cwd=ROOT, env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert shown.stdout.strip() == threads
