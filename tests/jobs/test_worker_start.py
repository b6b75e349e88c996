"""What a Celery worker does once it is ready, before its first task."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SETTLE = (
    "import django, gc; django.setup(); from evalhub.jobs.apps import settle_loaded_objects_at_start; "
    "before = gc.get_freeze_count(); settle_loaded_objects_at_start(sender=None); print(before, gc.get_freeze_count())"
)


def test_a_ready_worker_sets_what_it_loaded_aside_from_the_garbage_collector():
    from celery import signals

    assert any(key[0] == "evalhub-settle-loaded-objects" for key, _ in signals.worker_ready.receivers)
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "evalhub.settings", "SECRET_KEY": "test-only"}
    shown = subprocess.run([sys.executable, "-c", SETTLE], cwd=ROOT, env=env, capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr[-2000:]
    before, after = map(int, shown.stdout.split())
    assert before == 0
    assert after > 10_000, "Django, the apps and their modules are out of the collector's sight"
