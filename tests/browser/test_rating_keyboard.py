"""A rater in a real browser, keyboard only: a digit chooses the score, Ctrl+Enter submits and goes on,
s skips."""

from __future__ import annotations

import json

import pytest

from evalhub.catalog.models import Judgment
from tests.adjudication.test_rating import responses  # noqa: F401  (fixture)
from tests.browser.test_login_and_browse import log_in, page  # noqa: F401  (fixture)
from tests.conftest import make_user, requires_chromium
from tests.worker_threads import in_a_thread_of_its_own

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def rita(responses):  # noqa: F811
    return make_user("rita", "adjudicator")


def test_a_rater_scores_two_responses_and_skips_one_with_the_keyboard(live_server, rita, page):  # noqa: F811
    page.goto(f"{live_server.url}/login/")
    log_in(page, live_server.url, "pw", "rita")
    page.goto(f"{live_server.url}/adjudicate/rate/summ/coherence/")
    page.wait_for_load_state("load")  # the keyboard handler is a deferred script
    scored = []
    for key in ("4", "2", "s"):
        shown = page.locator("#rating-area").get_attribute("data-response")
        page.keyboard.press(key)
        if key != "s":
            assert page.locator(f"input[name=score][value='{key}']").is_checked()
            page.keyboard.press("Control+Enter")
            scored.append(float(key))
        page.wait_for_selector(f"#rating-area:not([data-response='{shown}'])")  # CSP: no wait_for_function
    assert "2 rated by you, 4 to go" in page.locator("#rating-area h1").inner_text()
    # Playwright's event loop owns this thread, where Django refuses ORM calls: asked from another.
    # The page names responses by this person's handles, not their ids: two scores on two responses.
    stored = in_a_thread_of_its_own(lambda: sorted(Judgment.objects.values_list("score", "response_id")))
    assert [score for score, _ in stored] == sorted(scored) and len({response for _, response in stored}) == 2


SCORES = "\n".join(
    json.dumps(
        {
            "prompt_id": f"p{n}",
            "prompt": f"Question {n}?",
            "model": "m1",
            "response": f"Answer {n}.",
            "rater": "gpt-judge",
            "criterion": "correctness",
            "score": 3,
            "scale": "1-5",
        }
    )
    for n in range(3)
).encode()


@pytest.fixture
def rosa(db):
    """An admin who also rates: she uploads the score file, then rates on its new criterion."""
    return make_user("rosa", "admin", "adjudicator")


def test_a_criterion_an_uploaded_score_file_created_is_rated_by_keyboard_and_a_refused_submit_says_why(
    live_server,
    rosa,
    page,  # noqa: F811
):
    """The file names a criterion evalhub did not have, on a 1-5 scale. Before, such a criterion had no
    levels: no digit did anything, and Ctrl+Enter answered 400 with nothing on screen (htmx does not
    swap a 4xx unless told to)."""
    page.goto(f"{live_server.url}/login/")
    log_in(page, live_server.url, "pw", "rosa")
    page.goto(f"{live_server.url}/judges/import-scores/")
    page.set_input_files("#id_file", files=[{"name": "scores.jsonl", "mimeType": "application/json", "buffer": SCORES}])
    page.fill("#id_benchmark", "qa")
    page.check("#id_create_models")
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"{live_server.url}/judges/pointwise/?benchmark=qa")
    assert "1 new criterion." in page.content()
    page.goto(f"{live_server.url}/adjudicate/rate/qa/correctness/")
    page.wait_for_load_state("load")
    # A page older than its criterion's levels (here: a radio made to say 9) is refused with the reason shown.
    page.evaluate("document.querySelector('input[name=score]').value = '9'")
    page.keyboard.press("9")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("#screen-error:has-text('Choose a score from 1 to 5')")
    page.goto(f"{live_server.url}/adjudicate/rate/qa/correctness/")
    page.wait_for_load_state("load")
    for key in ("5", "1"):
        shown = page.locator("#rating-area").get_attribute("data-response")
        page.keyboard.press(key)
        page.keyboard.press("Control+Enter")
        page.wait_for_selector(f"#rating-area:not([data-response='{shown}'])")
    assert "2 rated by you, 1 to go" in page.locator("#rating-area h1").inner_text()
    stored = in_a_thread_of_its_own(
        lambda: sorted(Judgment.objects.filter(judge_user__isnull=False).values_list("score", flat=True))
    )
    assert stored == [1.0, 5.0]
