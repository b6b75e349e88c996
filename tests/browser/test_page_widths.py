"""The pages fit their screens: on a phone (390 px) the page itself never scrolls sideways (a wide
table scrolls inside itself), and on a laptop (1366 px) the main navigation stays on one line, for
a user who holds every role."""

from __future__ import annotations

import pytest

from evalhub.debates.models import DebateStatus
from evalhub.surveys.actions import do_create_from_template, do_invite, do_publish
from tests.browser.test_login_and_browse import log_in, page  # noqa: F401 (fixture)
from tests.conftest import make_user, requires_chromium
from tests.dashboards.conftest import Arena

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGES = ("/leaderboards/", "/judges/", "/jobs/", "/models/alpha/", "/surveys/")


@pytest.fixture
def everyone(db):
    arena = Arena()
    for verdict in (1, 1, 2):
        arena.debate("alpha", "gamma", verdict=verdict)
    arena.debate("alpha", "beta", verdict=1, status=DebateStatus.ADJUDICATED)
    return make_user("olga-the-administrator", "admin", "adjudicator", "expert", "viewer", superuser=True)


@pytest.fixture
def survey_page(db) -> str:
    """A survey's manage page: its metric and issue editors are tables inside fieldsets."""
    survey = do_create_from_template("dhp-translation")
    do_invite(do_publish(survey.latest), name="A reviewer with a long name", email="reviewer@example.org")
    return f"/surveys/manage/{survey.slug}/"


def sideways(page) -> int:  # noqa: F811
    return page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")


def test_no_page_scrolls_sideways_on_a_phone_and_the_nav_keeps_one_line_on_a_laptop(
    live_server,
    everyone,
    survey_page,
    page,  # noqa: F811
):
    page.goto(f"{live_server.url}/login/")
    log_in(page, live_server.url, "pw", "olga-the-administrator")
    page.wait_for_url(f"{live_server.url}/")
    page.set_viewport_size({"width": 390, "height": 844})
    for path in (*PAGES, survey_page):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
        assert sideways(page) <= 0, f"{path} scrolls sideways by {sideways(page)} px at 390 px"
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(f"{live_server.url}/leaderboards/")
    links = "[...document.querySelectorAll('nav[aria-label=Main] a')]"
    tops = page.evaluate(f"{links}.map(a => a.getBoundingClientRect().top)")
    assert len(tops) >= 8 and len(set(tops)) == 1, f"the navigation wraps at 1366 px: {tops}"
