"""An adjudicator in a real browser, keyboard only: 1 / 2 to choose, Ctrl+Enter to submit and go on."""

from __future__ import annotations

import pytest

from evalhub.adjudication.models import Adjudication
from evalhub.core.statistics.agreement import unswap
from tests.adjudication.conftest import make_items  # noqa: F401  (fixture)
from tests.browser.test_login_and_browse import ARTIFACTS, log_in, page  # noqa: F401  (fixture)
from tests.conftest import make_user, requires_chromium
from tests.debates.conftest import demo  # noqa: F401  (fixture)
from tests.worker_threads import in_a_thread_of_its_own

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def queue_of_three(make_items):  # noqa: F811
    make_user("ada", "adjudicator")
    return make_items(category="math")


def test_an_adjudicator_decides_two_items_with_the_keyboard(live_server, queue_of_three, page):  # noqa: F811
    page.goto(f"{live_server.url}/login/")
    log_in(page, live_server.url, "pw", username="ada")
    page.goto(f"{live_server.url}/adjudicate/")
    page.click("text=Start")
    page.wait_for_load_state("load")  # the keyboard handler is a deferred script: press keys after it ran
    seen = []
    for key in ("1", "2"):
        area = page.locator("#adjudication-area")
        item = area.get_attribute("data-item")
        page.keyboard.press(key)
        assert page.locator(f"input[name=verdict][value='{key}']").is_checked()
        page.keyboard.press("Control+Enter")
        page.wait_for_selector(f"#adjudication-area:not([data-item='{item}'])")  # CSP: no wait_for_function
        seen.append((int(item), int(key)))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "adjudication-third-item.png"), full_page=True)
    # Playwright runs an event loop in this thread, where Django refuses ORM calls: ask from another.
    stored = in_a_thread_of_its_own(lambda: {a.item_id: (a.verdict, a.swapped) for a in Adjudication.objects.all()})
    assert sorted(stored) == sorted(item for item, _ in seen)
    for item, key in seen:
        verdict, swapped = stored[item]
        assert verdict == (unswap(key) if swapped else key), "stored in the agents' order"
