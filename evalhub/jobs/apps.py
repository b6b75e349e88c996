from __future__ import annotations

from django.apps import AppConfig


class JobsConfig(AppConfig):
    name = "evalhub.jobs"
    label = "jobs"

    def ready(self) -> None:
        from celery import signals

        from evalhub.jobs import watchdog

        # Sent by `celery worker` in the process that runs tasks (threads and solo pools); the
        # embedded worker starts its watchdog itself (evalhub.system.embedded).
        signals.worker_ready.connect(watchdog.start, weak=False, dispatch_uid="evalhub-watchdog-start")
        signals.worker_shutdown.connect(watchdog.stop, weak=False, dispatch_uid="evalhub-watchdog-stop")
