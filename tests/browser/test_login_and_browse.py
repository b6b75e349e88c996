"""A person in a real browser: log in, look around, and never run a model's script."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalhub.catalog.demo import do_load_demo
from evalhub.catalog.models import Prompt
from tests.conftest import CHROMIUM, make_user, requires_chromium

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            yield browser.new_page()
        finally:
            browser.close()


@pytest.fixture
def vera(db):
    """A viewer. Made before the browser starts: Playwright's loop makes Django refuse ORM calls."""
    return make_user("vera", "viewer")


@pytest.fixture
def demo_with_a_script(db):
    do_load_demo()
    response = Prompt.objects.get(external_id="write-01").responses.get(model__slug="demo-sloppy")
    response.text = '<script>window.pwned = true</script><img src=x onerror="window.pwned = true">'
    response.save()


def log_in(page, base_url: str, password: str, username: str = "vera") -> None:
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("button[type=submit]")


def test_a_viewer_logs_in_browses_to_a_prompt_and_sees_a_script_as_plain_text(
    live_server, vera, demo_with_a_script, page
):
    page.goto(f"{live_server.url}/benchmarks/")
    assert "/login/" in page.url
    log_in(page, live_server.url, "pw")
    page.wait_for_url(f"{live_server.url}/benchmarks/")
    page.click("text=Demo: ScaleEval-style scenarios")
    page.click("text=write-01")
    page.wait_for_selector("h1:has-text('write-01')")
    script_text = page.locator("text=<script>window.pwned = true</script>")
    assert script_text.filter(visible=True).count() == 1, "rendered once as text; the raw copy stays hidden"
    assert page.evaluate("window.pwned === undefined")
    box = page.locator(".text-box", has=script_text.first)
    box.locator(".raw-switch").click()
    assert box.locator("pre.raw").is_visible(), "raw text one click away"
    assert not box.locator(".md").is_visible(), "raw text one click away"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "prompt-page.png"), full_page=True)


def test_a_wrong_password_shows_an_error_and_keeps_the_visitor_out(live_server, vera, page):
    page.goto(f"{live_server.url}/login/")
    log_in(page, live_server.url, "wrong")
    assert page.locator("text=didn't match").count() == 1
    page.goto(f"{live_server.url}/")
    assert "/login/" in page.url
