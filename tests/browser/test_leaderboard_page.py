"""A viewer opens the leaderboard and a model page in a real browser: charts render, tables sort."""

from __future__ import annotations

import pytest

from evalhub.debates.models import DebateStatus
from tests.browser.test_login_and_browse import ARTIFACTS, log_in, page  # noqa: F401 (fixture)
from tests.conftest import make_user, requires_chromium
from tests.dashboards.conftest import Arena

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def tournament(db):
    """Made before the browser starts: Playwright's loop makes Django refuse ORM calls."""
    arena = Arena()
    for verdict in (1, 1, 1, 2):
        arena.debate("alpha", "beta", verdict=verdict)
    for verdict in (1, 2, 1):
        arena.debate("beta", "gamma", verdict=verdict, category="writing")
    arena.debate("alpha", "gamma", verdict=1, status=DebateStatus.ADJUDICATED)
    debates = list(arena.runs[("alpha", "beta", "helpfulness", "")].debates.all())
    arena.judge("openai:gpt-judge", {d: [d.verdict] for d in debates})
    make_user("vera", "viewer")
    return arena


def test_a_viewer_reads_the_leaderboard_sorts_it_and_opens_a_model_page(live_server, tournament, page):  # noqa: F811
    page.goto(f"{live_server.url}/leaderboards/")
    log_in(page, live_server.url, "pw")
    page.wait_for_selector("#pairwise svg.chart")
    chart = page.locator("#pairwise svg.chart")
    assert chart.locator("circle.marker").count() == 3, "one dot per model"
    assert chart.locator("line.whisker").count() == 3 * 3, "an interval with two caps per model"
    names = page.locator("#ratings-table tbody td:nth-child(2)")
    assert names.first.inner_text() == "ALPHA"

    page.click("#ratings-table th:has-text('Model')")  # sorts by name, descending first
    assert page.locator("#ratings-table tbody td:nth-child(2)").first.inner_text() == "GAMMA"
    page.fill("input[data-filter='ratings-table']", "bet")
    assert page.locator("#ratings-table tbody tr:not([hidden])").count() == 1

    page.uncheck("input[name=source][value=human]")
    page.click("#pairwise button[type=submit]")
    page.wait_for_selector("#pairwise:has-text('7 battles')")
    assert "source=consensus" in page.url
    assert page.locator("#judges-table").count() == 1, "the rest of the page stays"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "leaderboard.png"), full_page=True)

    page.click("#judges-table a:has-text('Judge X')")
    page.wait_for_selector("h1:has-text('Judge X')")
    assert page.locator("text=(4/4)").count() >= 1
    page.goto(f"{live_server.url}/models/alpha/")
    assert page.locator("text=4 won · 1 lost · 0 tied").count() == 1
    page.screenshot(path=str(ARTIFACTS / "model-page.png"), full_page=True)
