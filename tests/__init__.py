"""The test suite. Under pytest-xdist each worker process has its own test database (pytest-django adds
the worker's name to it) and, here, its own Redis database: the real-worker tests purge the queues and
start Celery workers, which must never take another test process's tasks."""

from __future__ import annotations

import os
from urllib.parse import urlsplit, urlunsplit

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and os.environ.get("REDIS_URL"):
    # The given database for a run without workers; worker n uses n + 1 (a default server has 16), and
    # the Celery workers a test starts inherit it through the environment.
    _url = urlsplit(os.environ["REDIS_URL"])
    os.environ["REDIS_URL"] = urlunsplit(_url._replace(path=f"/{int(_worker[2:]) % 15 + 1}"))
