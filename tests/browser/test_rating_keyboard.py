"""A rater in a real browser, keyboard only: a digit chooses the score, Ctrl+Enter submits and goes on,
s skips."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from evalhub.catalog.models import Judgment
from tests.adjudication.test_rating import responses  # noqa: F401  (fixture)
from tests.browser.test_login_and_browse import page  # noqa: F401  (fixture)
from tests.conftest import make_user, requires_chromium

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def rita(responses):  # noqa: F811
    return make_user("rita", "adjudicator")


def test_a_rater_scores_two_responses_and_skips_one_with_the_keyboard(live_server, rita, page):  # noqa: F811
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "rita")
    page.fill("#id_password", "pw")
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/adjudicate/rate/summ/coherence/")
    page.wait_for_load_state("load")  # the keyboard handler is a deferred script
    scored = []
    for key in ("4", "2", "s"):
        shown = page.locator("#rating-area").get_attribute("data-response")
        page.keyboard.press(key)
        if key != "s":
            assert page.locator(f"input[name=score][value='{key}']").is_checked()
            page.keyboard.press("Control+Enter")
            scored.append((int(shown), float(key)))
        page.wait_for_selector(f"#rating-area:not([data-response='{shown}'])")  # CSP: no wait_for_function
    assert "2 rated by you, 4 to go" in page.locator("#rating-area h1").inner_text()
    with ThreadPoolExecutor(1) as pool:  # Django refuses ORM calls in Playwright's event-loop thread
        stored = pool.submit(lambda: sorted(Judgment.objects.values_list("response_id", "score"))).result()
    assert stored == sorted(scored)
