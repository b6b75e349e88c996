"""Live debates in a real browser, as a user opens them: a turn already under way keeps growing on a
page opened mid-turn, and a run's rows change state without a reload, with no htmx target error.

The server is the embedded quickstart (web, worker and channel layer in one process, as a first look
runs it); the agents are a loopback OpenAI-compatible server that streams its answer word by word."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from evalhub.llm.testing import FakeLLMServer
from tests.browser.test_login_and_browse import ARTIFACTS, CHROMIUM_FLAGS
from tests.conftest import CHROMIUM, requires_chromium
from tests.home.test_quickstart import ROOT, free_port, quickstart_env, wait_for_line

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.slow]
ANSWER = " ".join(f"word{i}" for i in range(36)) + "\nSubmission 1 is better.\n1"
# htmx reports a fragment whose target is missing as this event; the page must never raise it.
WATCH_ERRORS = """
window.__htmxErrors = [];
document.addEventListener('htmx:oobErrorNoTarget', e => window.__htmxErrors.push(e.type));
document.addEventListener('htmx:swapError', e => window.__htmxErrors.push(e.type));
"""


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A quickstart with an empty instance and a two-prompt benchmark, and the streaming agents."""
    data = tmp_path_factory.mktemp("live-debate")
    env = quickstart_env(data)
    manage(env, "migrate", "-v0")
    rows = [
        {"prompt_id": f"p{i}", "prompt": f"Question {i}?", "model": model, "response": f"{model} answers {i}."}
        for i in range(2)
        for model in ("alpha", "beta")
    ]
    benchmark = data / "bench.jsonl"
    benchmark.write_text("\n".join(json.dumps(row) for row in rows))
    manage(env, "import_benchmark", str(benchmark), "--benchmark", "live", "--create-models")
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "manage.py", "quickstart", "--no-demo", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    with FakeLLMServer(reply=lambda messages: ANSWER, api_key="not-needed", chunk_delay_s=0.25) as agents:
        try:
            password = wait_for_line(process, r"with password: (\S+)")[0].group(1)
            wait_for_line(process, r"running at http://127\.0\.0\.1:\d+/")
            yield f"http://127.0.0.1:{port}", password, f"openai-compatible:{agents.url}/v1|slow-agent"
        finally:
            process.send_signal(signal.SIGINT)
            process.communicate(timeout=30)


@pytest.fixture
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            context = browser.new_context()
            context.add_init_script(WATCH_ERRORS)
            yield context.new_page()
        finally:
            browser.close()


def start_run(page, base: str, password: str, spec: str, name: str) -> None:
    page.goto(f"{base}/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")
    page.goto(f"{base}/debates/new/")
    page.fill("#id_name", name)
    page.select_option("#id_benchmark", label="live")
    page.select_option("#id_criterion", label="Helpfulness")
    page.select_option("#id_model_a", label="alpha")
    page.select_option("#id_model_b", label="beta")
    page.fill("#id_agents", f"{spec}\n{spec}")
    page.fill("#id_rounds", "1")
    page.check("#id_start")
    page.click("form:has(#id_name) button[type=submit]")
    page.wait_for_url(f"{base}/debates/runs/*/")


def streamed(page) -> str:
    return page.locator("#turn-0-0-text").inner_text(timeout=10_000)


def test_a_debate_opened_while_a_turn_streams_shows_that_turn_growing(server, page):
    from playwright.sync_api import expect

    base, password, spec = server
    start_run(page, base, password, spec, "opened mid-turn")
    debate = page.locator("a[href^='/debates/']", has_text="1").first.get_attribute("href")
    time.sleep(2)  # the normal click path: open a debate a moment after Start, while its turns stream
    page.goto(f"{base}{debate}")
    expect(page.locator("#turn-0-0-text")).to_contain_text("word0", timeout=30_000)
    assert page.locator("#turn-slot-0-0 .turn.thinking").count() == 1, "opened while the turn streams"
    first = streamed(page)
    time.sleep(1.5)
    later = streamed(page)
    assert len(later) > len(first), "the turn's words keep growing"
    assert later.startswith(first)
    page.wait_for_selector("#turn-slot-0-0 .turn:not(.thinking)", timeout=60_000)  # stored when it ends
    assert "word35" in page.locator("#turn-slot-0-0").inner_text()
    assert page.evaluate("window.__htmxErrors") == []
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "debate-live.png"), full_page=True)


def test_a_runs_rows_change_state_without_a_reload(server, page):
    from playwright.sync_api import expect

    base, password, spec = server
    start_run(page, base, password, spec, "rows live")
    page.evaluate("window.__notReloaded = true")
    rows = page.locator("tr[id^='debate-row-']")
    assert rows.count() == 2
    expect(page.locator("tr[id^='debate-row-'] .badge.consensus")).to_have_count(2, timeout=90_000)
    assert page.evaluate("window.__notReloaded") is True, "the rows changed in place"
    assert "2 of 2 debates finished" in page.locator(".run-summary").first.inner_text()
    assert page.evaluate("window.__htmxErrors") == []
