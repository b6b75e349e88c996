from __future__ import annotations

import logging
import os

from django.apps import AppConfig

logger = logging.getLogger("evalhub.jobs")


def fit_database_pool(sender=None, **_signal_kwargs) -> str:
    """At `worker_init`: this worker process's connection pool holds every thread it runs (evalhub.db_pool);
    a configured size too small for them is raised, and said loudly in the worker's log."""
    from evalhub.db_pool import fit_pool_to_worker

    concurrency = getattr(sender, "concurrency", 1)
    if not isinstance(concurrency, int):  # "auto", resolved after this signal: as many as the cores
        concurrency = os.cpu_count() or 1
    pool_cls = getattr(sender, "pool_cls", "prefork")
    warning = fit_pool_to_worker(concurrency, pool_cls, explicit="EVALHUB_DB_POOL_MAX_SIZE" in os.environ)
    if warning:
        logger.warning(warning)
    return warning


def check_pool_room(**_signal_kwargs) -> str:
    """At `worker_ready`: whether PostgreSQL has room for the pool just fitted, said in the worker's log
    when it has not. A database that cannot be asked is said too, and the worker goes on."""
    from django.db import DatabaseError

    from evalhub.db_pool import pool_room_on_server

    try:
        warning = pool_room_on_server()
    except DatabaseError as error:
        warning = f"could not ask PostgreSQL how many connections it has left for this worker: {error}"
    if warning:
        logger.warning(warning)
    return warning


def settle_loaded_objects_at_start(**_signal_kwargs) -> None:
    """At `worker_ready`, as the web server does at its start (evalhub.asgi): what the worker loaded is
    set aside from the garbage collector, whose full collections otherwise walk every module and task
    again and again while debates stream (about 5 % of a worker's CPU on 100 debates, measured by
    benchmarks/debate_throughput.py --production)."""
    from evalhub.startup import settle_loaded_objects

    settle_loaded_objects()


class JobsConfig(AppConfig):
    name = "evalhub.jobs"
    label = "jobs"

    def ready(self) -> None:
        from celery import signals

        from evalhub.jobs import watchdog

        # Before the worker's first task: its pool is made on the first connection.
        signals.worker_init.connect(fit_database_pool, weak=False, dispatch_uid="evalhub-fit-database-pool")
        # Sent by `celery worker` in the process that runs tasks (threads and solo pools); the
        # embedded worker starts its watchdog itself (evalhub.home.embedded).
        signals.worker_ready.connect(watchdog.start, weak=False, dispatch_uid="evalhub-watchdog-start")
        signals.worker_ready.connect(check_pool_room, weak=False, dispatch_uid="evalhub-check-pool-room")
        signals.worker_ready.connect(
            settle_loaded_objects_at_start, weak=False, dispatch_uid="evalhub-settle-loaded-objects"
        )
        signals.worker_shutdown.connect(watchdog.stop, weak=False, dispatch_uid="evalhub-watchdog-stop")
