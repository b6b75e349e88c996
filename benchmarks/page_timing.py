"""Server time of pages through Django's test client, cold (cache emptied first) or warm."""

from __future__ import annotations

import time

import numpy as np


def timed(client, url: str, requests: int, cold: bool) -> list[float]:
    from django.core.cache import cache

    out = []
    for _ in range(requests):
        if cold:
            cache.clear()
        start = time.perf_counter()
        response = client.get(url)
        out.append(time.perf_counter() - start)
        assert response.status_code == 200, (url, response.status_code)
    return out


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile in milliseconds."""
    return float(np.percentile(values, q)) * 1000
