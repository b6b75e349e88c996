"""The embedded runtime: a Celery worker in a thread and the ASGI server in one process.

Used by `manage.py quickstart` and by the tests that need a real worker.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from celery import Celery
from celery.worker import WorkController

logger = logging.getLogger(__name__)


class ThreadWorkController(WorkController):
    """A worker that says when its consumer is ready, so callers can wait for it."""

    def __init__(self, *args, **kwargs) -> None:
        self.ready = threading.Event()
        super().__init__(*args, **kwargs)

    def on_consumer_ready(self, consumer) -> None:
        self.ready.set()


@contextmanager
def worker_thread(
    app: Celery,
    queues: Sequence[str],
    *,
    pool: str = "threads",
    concurrency: int = 4,
    startup_timeout: float = 30.0,
    shutdown_timeout: float = 30.0,
) -> Iterator[WorkController]:
    """Run a real Celery worker on `queues` in a daemon thread until the block ends."""
    from celery.worker import state

    app.finalize()
    worker = ThreadWorkController(
        app=app,
        queues=list(queues),
        pool=pool,
        concurrency=concurrency,
        hostname=f"embedded-{threading.get_ident()}@localhost",
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        loglevel="WARNING",
    )
    thread = threading.Thread(target=worker.start, name="celery-worker", daemon=True)
    thread.start()
    if not worker.ready.wait(startup_timeout):
        raise RuntimeError(f"the embedded Celery worker did not start within {startup_timeout:.0f} s.")
    try:
        yield worker
    finally:
        state.should_terminate = 0  # the consumer loop exits at its next tick
        thread.join(shutdown_timeout)
        if thread.is_alive():
            logger.warning("the embedded worker did not stop within %.0f s", shutdown_timeout)
        state.should_terminate = None


def serve(host: str, port: int) -> None:
    """Serve the ASGI app until Ctrl-C or SIGTERM; returns after a graceful shutdown."""
    import uvicorn

    config = uvicorn.Config("evalhub.asgi:application", host=host, port=port, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    try:
        server.run()
    except KeyboardInterrupt:
        # uvicorn re-raises the captured signal after shutting down; that is our normal exit.
        pass
