"""The Celery application. Queues: `default` (debates, LLM calls) and `gpu` (local models)."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

app = Celery("evalhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

DEFAULT_QUEUE = "default"
GPU_QUEUE = "gpu"
QUEUES = (DEFAULT_QUEUE, GPU_QUEUE)
