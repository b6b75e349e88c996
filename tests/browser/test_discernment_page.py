"""A viewer reads a finished DHP run in Chromium: discernment per judge, with the D = 1 line."""

from __future__ import annotations

import pytest

from evalhub.jobs.runners import work_chunk
from evalhub.scoring.actions import do_create_discernment_run
from evalhub.scoring.discernment.config import DiscernmentConfig
from tests.browser.test_login_and_browse import ARTIFACTS, log_in, page  # noqa: F401 (fixture)
from tests.conftest import make_user, requires_chromium
from tests.scoring.conftest import server, summaries  # noqa: F401 (fixtures)
from tests.scoring.test_discernment import spec

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def finished_job(summaries, server):  # noqa: F811
    benchmark, system = summaries
    run = do_create_discernment_run(
        DiscernmentConfig(
            benchmark=benchmark,
            family="dhp",
            task="dhp-summarization",
            targets=[system],
            perturbations=[["random_deletions", "minor"], ["random_typos", "major"], ["reordering", "major"]],
            metrics=["coherence", "fluency"],
            judges=[spec(server, "perfect"), spec(server, "coin")],
            repeats=1,
        ),
        enqueue=False,
    )
    for pk in run.job.chunks.values_list("pk", flat=True):
        work_chunk(pk)
    make_user("vera", "viewer")
    return run.job.pk


def test_a_viewer_sees_which_perturbations_each_judge_noticed(live_server, finished_job, page):  # noqa: F811
    page.goto(f"{live_server.url}/jobs/{finished_job}/")
    log_in(page, live_server.url, "pw")
    page.wait_for_selector("#discernment-results h2:has-text('perfect')")
    assert page.locator("text=✓ discerns every perturbation").count() == 1
    assert page.locator("svg.chart").count() == 2
    assert page.locator("svg.chart line.zero").count() == 2
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "discernment-job.png"), full_page=True)
