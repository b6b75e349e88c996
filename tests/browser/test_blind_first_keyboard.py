"""Blind first in a real browser, keyboard only: 1 / 2 / 0 and Ctrl+Enter give the blind verdict, the
aid appears, Enter keeps the verdict (or 1 / 2 / 0, then Enter, changes it) and the next item comes."""

from __future__ import annotations

import json
import time

import pytest

from evalhub.adjudication.models import Adjudication
from evalhub.core.scaleeval.aids import DEBATE, NO_AID
from evalhub.core.statistics.agreement import unswap
from evalhub.debates.models import BLIND_FIRST, DebateTurn
from tests.adjudication.conftest import make_items  # noqa: F401  (fixture)
from tests.browser.test_login_and_browse import ARTIFACTS, log_in, page  # noqa: F401  (fixture)
from tests.conftest import make_user, requires_chromium
from tests.debates.conftest import demo  # noqa: F401  (fixture)
from tests.worker_threads import in_a_thread_of_its_own

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def blind_queue(make_items):  # noqa: F811
    make_user("ada", "adjudicator")
    items = make_items(category="math", flow=BLIND_FIRST, aids=[DEBATE, NO_AID])
    for item in items:
        for agent in range(3):
            DebateTurn.objects.create(
                debate=item.debate, round=0, agent=agent, agent_spec="heuristic", text=f"AGENT-{agent}-SAYS", verdict=1
            )
    return items


def test_an_adjudicator_gives_a_blind_verdict_then_keeps_or_changes_it_with_the_keyboard(
    live_server,
    blind_queue,
    page,  # noqa: F811
):
    page.goto(f"{live_server.url}/login/")
    log_in(page, live_server.url, "pw", username="ada")
    page.goto(f"{live_server.url}/adjudicate/")
    page.click("text=Start")
    page.wait_for_load_state("load")  # the keyboard handler is a deferred script: press keys after it ran
    plan = [("1", None), ("2", "0"), ("0", None)]  # blind key, then a change (or None: Enter keeps)
    seen, seconds = [], []
    for blind_key, change in plan:
        started = time.perf_counter()
        item = page.locator("#adjudication-area").get_attribute("data-item")
        assert "AGENT-0-SAYS" not in page.content(), "no aid before the blind verdict"
        page.keyboard.press(blind_key)
        page.keyboard.press("Control+Enter")
        page.wait_for_selector("#verdict-form[data-step='reveal']")
        assert page.locator("#aid").is_visible()
        assert page.locator(f"input[name=verdict][value='{blind_key}']").is_checked(), "the blind verdict, chosen"
        if change is not None:
            page.keyboard.press(change)
        page.keyboard.press("Enter")
        page.wait_for_selector(f"#adjudication-area:not([data-item='{item}'])")  # CSP: no wait_for_function
        seconds.append(time.perf_counter() - started)
        seen.append((int(item), int(blind_key), int(change or blind_key)))
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "blind-first-done.png"), full_page=True)
    (ARTIFACTS / "blind-first-seconds-per-item.json").write_text(json.dumps(seconds))
    stored = in_a_thread_of_its_own(
        lambda: {
            a.item_id: (a.blind.verdict, a.verdict, a.swapped) for a in Adjudication.objects.select_related("blind")
        }
    )
    assert sorted(stored) == sorted(item for item, _, _ in seen)
    for item, blind_key, final_key in seen:
        blind, final, swapped = stored[item]
        assert (blind, final) == tuple(unswap(k) if swapped else k for k in (blind_key, final_key))
