"""The Celery application. Queues: `default` (debates, LLM calls) and `gpu` (local models)."""

from __future__ import annotations

import os

from celery import Celery

from evalhub.startup import settings_or_exit

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
settings_or_exit()

app = Celery("evalhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

DEFAULT_QUEUE = "default"
GPU_QUEUE = "gpu"
QUEUES = (DEFAULT_QUEUE, GPU_QUEUE)


def task_named(name: str):
    """A registered task by its name, so actions enqueue work without importing the tasks modules
    (which import the runners). Registered tasks are found by importing every app's tasks once."""
    if name not in app.tasks:
        app.loader.import_default_modules()
    return app.tasks[name]
