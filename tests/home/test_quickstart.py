"""The embedded quickstart, as a new user runs it: a real process on a free port."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def quickstart_env(data_dir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"}}
    env.update(EVALHUB_DATA_DIR=str(data_dir), PYTHONUNBUFFERED="1", DJANGO_SETTINGS_MODULE="evalhub.settings")
    return env


def wait_for_line(process: subprocess.Popen, pattern: str, timeout: float = 90) -> tuple[re.Match, str]:
    seen = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            break
        seen.append(line)
        match = re.search(pattern, line)
        if match:
            return match, "".join(seen)
    raise AssertionError(f"never printed {pattern!r}; output:\n{''.join(seen)}")


def log_in(client: httpx.Client, password: str) -> httpx.Response:
    client.get("/login/")
    return client.post(
        "/login/",
        data={"username": "admin", "password": password, "csrfmiddlewaretoken": client.cookies["csrftoken"]},
    )


def start_quickstart(data_dir: Path) -> tuple[subprocess.Popen, int, str]:
    """`manage.py quickstart` on a free port in its own process: the process, the port and the
    admin password it printed, once it says it is running."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "quickstart", "--port", str(port)],
        cwd=ROOT,
        env=quickstart_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        password = wait_for_line(process, r"with password: (\S+)")[0].group(1)
        wait_for_line(process, r"running at http://127\.0\.0\.1:\d+/")
    except BaseException:
        process.kill()
        process.communicate(timeout=30)
        raise
    return process, port, password


def test_quickstart_serves_the_demo_runs_a_background_task_and_stops_cleanly_on_ctrl_c(tmp_path):
    process, port, password = start_quickstart(tmp_path)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", follow_redirects=False, timeout=30) as client:
            assert client.get("/").status_code == 302
            assert log_in(client, password).status_code == 302
            home = client.get("/")
            assert home.status_code == 200
            assert "Demo: ScaleEval-style scenarios" in home.text
            # A background task through the in-process worker: the page returns at once, the job finishes.
            started = client.post("/jobs/worker-check/", headers={"X-CSRFToken": client.cookies["csrftoken"]})
            assert started.status_code == 302
            for _ in range(100):
                page = client.get(started.headers["location"]).text
                if "Every queue answered." in page:
                    break
                time.sleep(0.2)
            else:
                raise AssertionError("the embedded worker never answered")
    finally:
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=30)
    assert process.returncode == 0, output
    assert "Stopped." in output


def test_running_quickstart_twice_duplicates_nothing(tmp_path):
    command = [sys.executable, "manage.py", "quickstart", "--no-serve"]
    env = quickstart_env(tmp_path)
    first = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    second = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr + second.stderr
    assert second.returncode == 0, first.stderr + second.stderr
    assert "prompts 12 new" in first.stdout
    assert "responses 36 new" in first.stdout
    assert "3 new model(s)" in first.stdout, "the demo systems it created"
    assert "0 new model(s)" in second.stdout, "the demo systems it created"
    assert "prompts 0 new, 0 updated, 12 unchanged; responses 0 new, 0 updated, 36 unchanged" in second.stdout
    assert "with password:" in first.stdout
    assert "with password:" not in second.stdout
