"""An admin starts a generation run with hint tiers in Chromium, reads the tier table, and fixes a hint."""

from __future__ import annotations

import pytest

from tests.browser.test_login_and_browse import ARTIFACTS, page  # noqa: F401 (fixture)
from tests.conftest import make_user, requires_chromium
from tests.generation.conftest import maths, server, spec  # noqa: F401 (fixtures)

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def root(db):
    from evalhub.catalog.demo import do_load_builtin_criteria

    do_load_builtin_criteria()
    return make_user("root", "admin")  # before the page: Playwright's loop makes the test body async


def test_an_admin_runs_hint_tiers_reads_accuracy_per_tier_and_edits_a_hint(live_server, maths, server, root, page):  # noqa: F811
    page.goto(f"{live_server.url}/generation/new/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw")
    page.click("button[type=submit]")
    page.wait_for_selector("h1:has-text('New generation run')")
    page.select_option("#id_benchmark", label="Maths")
    page.fill("#id_new_candidates", f"{spec(server, 'strong')}\n{spec(server, 'weak')}")
    page.fill("#id_tiers", "0, 1, 2")
    page.fill("#id_hint_count", "2")
    page.fill("#id_hint_maker", "reference-prefix")
    page.fill("#id_anchor", spec(server, "weak"))
    page.click("button:has-text('Start')")  # tasks run eagerly in tests: the job is done when the page loads
    page.wait_for_selector("#generation-results h2:has-text('Accuracy per hint tier')")
    table = page.locator("#generation-results table").nth(1)
    assert table.locator("th").all_inner_texts()[1:] == ["Overall", "No hint", "1 hint", "2 hints"]
    strong = table.locator("tr:has-text('strong')").first.locator("td").all_inner_texts()
    assert [cell.split("\n")[0] for cell in strong[2:]] == ["0%", "100%", "100%"]
    assert page.locator("text=No reference solution").count() == 1

    # One step to the paper's Table 3: a single judge (with the reference) on every tier's pairs.
    page.click("summary:has-text('Judge every tier against weak')")
    page.fill("#id_judge", "heuristic:reference")
    page.click("button:has-text('Start the judges')")
    page.wait_for_selector("text=Started 3 judge runs against weak")
    page.wait_for_selector("#generation-results th:has-text('Model vs weak')")
    win_rates = page.locator("#generation-results table").nth(2)
    assert win_rates.locator("th").all_inner_texts()[1:] == ["Overall", "No hint", "1 hint", "2 hints"]
    assert win_rates.locator("tr:has-text('strong')").count() == 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "generation-job.png"), full_page=True)

    page.goto(f"{live_server.url}/generation/hints/maths/")
    page.click("tr:has-text('sum') >> text=Edit")
    page.fill("#id_hint_2", "Then add the units: it makes 42.")
    page.click("button:has-text('Save hints')")
    page.wait_for_selector("text=still contains the final answer")
    assert page.locator("text=flagged: not used").count() == 1
    assert "Then add the units: it makes 42." in page.content()
