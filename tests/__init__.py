"""The test suite. Under pytest-xdist each worker process has its own test database (pytest-django adds
the worker's name to it) and, here, its own Redis database (the real-worker tests purge the queues and
start Celery workers, which must never take another test process's tasks) and its own data directory
(the response cache there is a file every test empties first: shared, one worker emptied it in the
middle of another's test, which then made a call it had cached)."""

from __future__ import annotations

import os
import tempfile
from urllib.parse import urlsplit, urlunsplit

_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _worker.startswith("gw") and os.environ.get("REDIS_URL"):
    # The given database for a run without workers; worker n uses n + 1 (a default server has 16), and
    # the Celery workers a test starts inherit it through the environment.
    _url = urlsplit(os.environ["REDIS_URL"])
    os.environ["REDIS_URL"] = urlunsplit(_url._replace(path=f"/{int(_worker[2:]) % 15 + 1}"))
if _worker.startswith("gw"):
    # The controller's settings chose a data directory, and every worker inherited it: one each instead.
    os.environ["EVALHUB_DATA_DIR"] = tempfile.mkdtemp(prefix=f"evalhub-test-{_worker}-")
