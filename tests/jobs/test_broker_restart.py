"""A Redis restart under a live worker: work queued afterwards finishes without a person.

The worker runs as the shipped docker-compose.yml runs it (`restart: unless-stopped`: started
again whenever it exits), against a Redis server of the test's own that is stopped and started
again, as a redeploy or a crash of Redis does."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

import pytest
from django.db import connection

from evalhub.jobs.models import Job, JobStatus
from tests.home.test_quickstart import ROOT, free_port
from tests.jobs.workers import on_postgres, start_worker, stop_all, wait_for

pytestmark = [
    on_postgres,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs the redis-server program"),
]


class RedisServer:
    def __init__(self, directory: str) -> None:
        self.port, self.directory, self.process = free_port(), directory, None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        command = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--appendonly", "yes"]
        self.process = subprocess.Popen(command, cwd=self.directory, stdout=subprocess.DEVNULL)
        wait_for(self.answers, 10, "Redis to answer")

    def answers(self) -> bool:
        ping = subprocess.run(["redis-cli", "-p", str(self.port), "ping"], capture_output=True)
        return ping.stdout.strip() == b"PONG"

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)


class RestartedWorker(threading.Thread):
    """A worker started again whenever it exits, as compose's restart policy does."""

    def __init__(self, data_dir: str, redis_url: str) -> None:
        super().__init__(daemon=True)
        self.data_dir, self.redis_url = data_dir, redis_url
        self.starts, self.process, self.stopping = 0, None, threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            self.process = start_worker("restarted", "threads", self.data_dir, REDIS_URL=self.redis_url)
            self.starts += 1
            self.process.wait()
            time.sleep(1)  # compose waits before a restart too

    def stop(self) -> None:
        self.stopping.set()
        stop_all(self.process)
        self.join(10)


def queue_worker_check(redis_url: str) -> int:
    """A worker check queued as a user's click does, through the given Redis (a process of its own:
    this one's Celery app is bound to the suite's broker)."""
    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "REDIS_URL": redis_url,
    }
    code = "from evalhub.jobs.actions import do_start_worker_check; print(do_start_worker_check(None).pk)"
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.strip().splitlines()[-1])


def finishes(job_id: int, timeout: float = 90) -> None:
    wait_for(lambda: Job.objects.get(pk=job_id).status == JobStatus.SUCCEEDED, timeout, f"worker check {job_id}")


def test_work_queued_after_each_of_three_redis_restarts_finishes_by_itself():
    with tempfile.TemporaryDirectory() as directory:
        redis = RedisServer(directory)
        redis.start()
        worker = RestartedWorker(directory, redis.url)
        try:
            worker.start()
            finishes(queue_worker_check(redis.url))  # the worker is up and consuming
            for _ in range(3):
                redis.stop()
                time.sleep(2)  # the worker notices the lost connection
                redis.start()
                finishes(queue_worker_check(redis.url))
        finally:
            worker.stop()
            redis.stop()
    print(f"worker started {worker.starts} time(s) over three Redis restarts")
