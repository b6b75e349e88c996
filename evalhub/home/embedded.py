"""The embedded runtime: a Celery worker in a thread and the ASGI server in one process.

Used by `manage.py quickstart` and by the tests that need a real worker.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from celery import Celery, signals
from celery.worker import WorkController

logger = logging.getLogger(__name__)


class ThreadWorkController(WorkController):
    """A worker that says when its consumer is ready, so callers can wait for it."""

    def __init__(self, *args, **kwargs) -> None:
        self.ready = threading.Event()
        super().__init__(*args, **kwargs)

    def on_consumer_ready(self, consumer) -> None:
        from evalhub.jobs import watchdog

        watchdog.start()  # the CLI worker's worker_ready does this; a worker built in code must
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
    # The CLI worker sends worker_init; Celery's Django fixup then closes database
    # connections around every task. A worker built in code must send it itself.
    signals.worker_init.send(sender=worker)
    thread = threading.Thread(target=worker.start, name="celery-worker", daemon=True)
    thread.start()
    if not worker.ready.wait(startup_timeout):
        raise RuntimeError(f"the embedded Celery worker did not start within {startup_timeout:.0f} s.")
    try:
        yield worker
    finally:
        from evalhub.jobs import watchdog

        watchdog.stop()
        state.should_terminate = 0  # the consumer loop exits at its next tick
        thread.join(shutdown_timeout)
        if thread.is_alive():
            logger.warning("the embedded worker did not stop within %.0f s", shutdown_timeout)
        state.should_terminate = None


def serve(host: str, port: int, on_ready: Callable[[], None] = lambda: None) -> None:
    """Serve the ASGI app until Ctrl-C or SIGTERM; returns after a graceful shutdown.

    `on_ready` runs once the socket is listening, so "running at" is never printed early.
    """
    import uvicorn

    class AnnouncingServer(uvicorn.Server):
        async def startup(self, sockets=None) -> None:
            await super().startup(sockets)
            if self.started:
                on_ready()

    config = uvicorn.Config(
        "evalhub.asgi:application",
        host=host,
        port=port,
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=10,
    )
    try:
        AnnouncingServer(config).run()
    except KeyboardInterrupt:
        # uvicorn re-raises the captured signal after shutting down; that is our normal exit.
        pass
