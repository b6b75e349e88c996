"""Every worker process watches for chunks whose worker died, and sends them back to the queue.

A worker killed mid-chunk (SIGKILL, an OOM kill, a redeploy's SIGTERM-then-SIGKILL) leaves its
message unacknowledged in the broker until the visibility timeout (hours). Its chunk's heartbeat
stops instead, and whichever live worker's watchdog looks next requeues it within
EVALHUB_STALL_SECONDS plus one look. Many watchdogs are safe together: each chunk is taken back
by one of them (evalhub.jobs.chunks.do_requeue_stalled_chunks). It also sends again a chunk whose
message no worker ever took (do_resend_unclaimed_chunks): a lost message delays a job, never strands it.
"""

from __future__ import annotations

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connection

logger = logging.getLogger(__name__)

_started: threading.Event | None = None


def look_once() -> int:
    from evalhub.jobs.chunks import do_requeue_stalled_chunks, do_resend_unclaimed_chunks

    try:
        count = do_requeue_stalled_chunks()
        resent = do_resend_unclaimed_chunks()
    except Exception:  # a database hiccup must not end the watchdog
        logger.exception("the stall check failed; trying again at the next look")
        return 0
    finally:
        close_old_connections()
    if count:
        logger.warning("sent %d chunk(s) of dead workers back to the queue", count)
    if resent:
        logger.warning("sent %d chunk(s) again that no worker had taken (a lost message)", resent)
    return count + resent


def _watch(stop: threading.Event) -> None:
    interval = max(1.0, settings.EVALHUB_STALL_SECONDS / 2)
    try:
        while not stop.wait(interval):
            look_once()
    finally:
        connection.close()


def start(**_signal_kwargs) -> threading.Event:
    """Start this process's watchdog (once); set the returned event to stop it."""
    global _started
    if _started is None:
        _started = threading.Event()
        threading.Thread(target=_watch, args=(_started,), name="evalhub-stall-watchdog", daemon=True).start()
    return _started


def stop(**_signal_kwargs) -> None:
    global _started
    if _started is not None:
        _started.set()
        _started = None
