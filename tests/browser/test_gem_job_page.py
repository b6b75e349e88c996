"""A viewer opens a finished GEM job: the table, the chart with intervals and the reports load."""

from __future__ import annotations

import pytest

from tests.browser.test_login_and_browse import ARTIFACTS, log_in, page  # noqa: F401 (fixture)
from tests.conftest import make_user, requires_chromium
from tests.scoring.conftest import eval_lm, finished_run, reviews, tiny_model_dir  # noqa: F401 (fixtures)

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def finished_job(finished_run):  # noqa: F811
    make_user("vera", "viewer")  # before the browser starts: Playwright's loop makes Django refuse ORM calls
    return finished_run.job.pk


def test_a_viewer_reads_the_gre_bench_table_and_chart_of_a_finished_job(
    live_server,
    finished_job,
    page,  # noqa: F811
):
    page.goto(f"{live_server.url}/jobs/{finished_job}/")
    log_in(page, live_server.url, "pw")
    page.wait_for_selector("#gem-results h2:has-text('GRE-bench: GEM-raw')")
    assert page.locator("#job-status .badge.succeeded").count() == 1
    chart = page.locator("svg.chart")
    assert chart.locator("circle.marker").count() == 1, "Model A"
    assert chart.locator("rect.marker.baseline").count() == 4, "three human reviewers and their pooled row"
    assert chart.locator("line.whisker").count() == 5 * 3, "an interval with two caps per row"
    assert page.locator("td:has-text('Average human (pooled over reviewers)')").count() == 1
    assert page.locator("td:has-text('Model A')").count() == 1
    assert page.locator("text=Sentence deletion").count() >= 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "gem-job.png"), full_page=True)
