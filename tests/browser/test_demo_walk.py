"""A new user's first look, in a real browser: a fresh quickstart (its own process, SQLite, the
worker inside), every kind of page, each showing data — no empty state — with a screenshot each."""

from __future__ import annotations

import signal
import time

import pytest

from tests.browser.test_login_and_browse import ARTIFACTS, CHROMIUM_FLAGS
from tests.conftest import CHROMIUM, requires_chromium
from tests.home.test_quickstart import start_quickstart

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.slow]
DEMO_JOBS = 8  # debates, a single judge, a YESciEval rubric judge, the blind-first run, GEM, DHP, YESciEval, generation
# The empty states the demo keeps on purpose: a demo system is a candidate, never a judge, and
# people's verdicts are the user's next step (adjudication), not something the demo makes up.
EXPECTED_EMPTY = {
    "model": (
        "This model has not judged any pair",
        "No DHP, YESciEval or single-judge run names this model",
        "No generation run",
    ),
    "judges": ("No person's verdicts yet",),
    "judge": ("No corrected board",),  # the simulated people labelled 5 of its battles: too few to correct with
    "job: Generation": ("No anchor model was chosen",),  # win rates need a judged anchor; accuracy is shown
}


@pytest.fixture
def quickstart(tmp_path):
    process, port, password = start_quickstart(tmp_path)
    try:
        yield f"http://127.0.0.1:{port}", password
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=30)


def href(page, selector: str) -> str:
    link = page.locator(selector).first
    assert link.count(), f"no link {selector} on {page.url}"
    return link.get_attribute("href")


def test_a_fresh_quickstart_shows_data_on_every_kind_of_page(quickstart):
    from playwright.sync_api import sync_playwright

    base, password = quickstart
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/login/")
        page.fill("#id_username", "admin")
        page.fill("#id_password", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/")
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            page.goto(f"{base}/jobs/")
            if page.locator("main .badge.succeeded").count() >= DEMO_JOBS:
                break
            assert page.locator("main .badge.failed").count() == 0, page.inner_text("main")
            time.sleep(2)
        else:
            raise AssertionError(f"the demo jobs did not all finish: {page.inner_text('main')}")

        walk: list[tuple[str, str, str]] = [
            ("home", "/", "What to do next"),
            ("benchmarks", "/benchmarks/", "Demo: arithmetic with worked solutions"),
            ("benchmark", "/benchmarks/demo-arithmetic/", "arith-01"),
            ("models", "/models/", "Demo system: thorough"),
            ("model", "/models/demo-thorough/", "Demo system: thorough"),
            ("leaderboards", "/leaderboards/", "GRE-bench"),
            ("judges", "/judges/", "heuristic:concise"),
            ("debates", "/debates/", "Demo: thorough vs terse"),
            ("jobs", "/jobs/", "Succeeded"),
            ("generation", "/generation/", "Demo: arithmetic with worked solutions"),
            ("hints", "/generation/hints/demo-arithmetic/", "Multiply in two parts."),
            ("surveys", "/surveys/", "DHP"),
            ("survey", "/surveys/manage/dhp-question-answering/", "Demo expert"),
            ("adjudication queue", "/adjudicate/", "3 open"),
        ]
        visit = {}
        page.goto(f"{base}/benchmarks/demo-arithmetic/")
        walk.append(("prompt", href(page, "main a[href*='/prompts/']"), "17 × 23"))
        page.goto(f"{base}/debates/")
        run_url = href(page, "main a[href^='/debates/runs/']")
        walk.append(("debate run", run_url, "sent to adjudication"))
        page.goto(base + run_url)
        walk.append(("debate", href(page, "main tr[id^='debate-row-'] a"), "Question"))
        page.goto(f"{base}/judges/")
        # The single judge: it gave probabilities (3 samples) and has a corrected board.
        single_judge = "main tbody a[href^='/judges/']:text-is('heuristic:concise')"  # not its rubric sibling
        walk.append(("judge", href(page, single_judge), "Agreement"))
        page.goto(f"{base}/jobs/")
        job_pages = (
            ("GEM", "GRE-bench"),
            ("DHP", "random_typos"),
            ("YESciEval", "all rubrics"),
            ("Generation", "Accuracy per hint tier"),
        )
        for title, expected in job_pages:
            job_url = href(page, f"main a[href^='/jobs/']:has-text('{title}')")
            walk.append((f"job: {title}", job_url, expected))
        for name, url, expected in walk:
            page.goto(base + url)
            page.wait_for_load_state("networkidle")
            main = page.inner_text("main")
            visit[name] = url
            assert expected in main, (name, url, main[:500])
            empty = [e.inner_text() for e in page.locator("main .empty").all() if e.is_visible()]
            unexpected = [text for text in empty if not text.startswith(EXPECTED_EMPTY.get(name, ()))]
            assert unexpected == [], (name, url, unexpected)
            page.screenshot(path=str(ARTIFACTS / f"demo-{name.replace(' ', '-').replace(':', '')}.png"), full_page=True)
        page.goto(base + "/surveys/manage/dhp-question-answering/")
        invite = page.locator("main tbody code").first.inner_text()  # the link an admin sends an expert
        page.goto(base + invite)
        assert "Instructions" in page.inner_text("main")
        page.screenshot(path=str(ARTIFACTS / "demo-survey-invitation.png"), full_page=True)
        browser.close()
