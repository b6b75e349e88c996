"""Server time of pages through Django's test client, cold (cache emptied first) or warm, wall and CPU."""

from __future__ import annotations

import time

import numpy as np


def timed(client, url: str, requests: int, cold: bool) -> tuple[list[float], list[float]]:
    """Each request's wall and CPU time (this process's: Django's work, not the database server's)."""
    from django.core.cache import cache

    walls, cpus = [], []
    for _ in range(requests):
        if cold:
            cache.clear()
        start, cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        walls.append(time.perf_counter() - start)
        cpus.append(time.process_time() - cpu)
        assert response.status_code == 200, (url, response.status_code)
    return walls, cpus


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile in milliseconds."""
    return float(np.percentile(values, q)) * 1000
