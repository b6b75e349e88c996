"""An expert with an invitation link, in a real browser, keyboard only; then the admin reads the weights."""

from __future__ import annotations

import pytest

from tests.browser.test_login_and_browse import ARTIFACTS, page  # noqa: F401  (fixture)
from tests.conftest import make_user, requires_chromium

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def invitation(db):
    from evalhub.surveys.actions import do_create_from_template, do_invite, do_publish

    make_user("root", "admin")
    return do_invite(do_publish(do_create_from_template("dhp-translation").latest), name="Expert")


def focus_lands_on(browser_page, selector: str) -> None:
    # autofocus is applied on a later rendering step than the load event: a key pressed before it goes nowhere
    # (an expectation, not wait_for_function: the page's CSP forbids the eval that one needs)
    from playwright.sync_api import expect

    expect(browser_page.locator(selector).first).to_be_focused()


def test_an_expert_answers_every_step_with_the_keyboard_and_the_weights_show_it(live_server, invitation, page):  # noqa: F811
    page.goto(f"{live_server.url}/surveys/{invitation.token}/")
    focus_lands_on(page, "button[type=submit]")
    page.keyboard.press("Enter")  # Start (autofocused)
    for step in range(1, 6):
        page.wait_for_selector(f"text=Quality issue {step} of 5")
        focus_lands_on(page, "input[name=metric]")
        page.keyboard.press("ArrowDown")  # from the first metric (focused) to the second: Fluency
        page.keyboard.press("Enter")  # implicit submission: Next
    page.wait_for_selector("text=Review")
    focus_lands_on(page, "button[type=submit]")
    page.keyboard.press("Enter")  # Submit (autofocused)
    page.wait_for_selector("text=your answers are in")
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw")
    page.click("button[type=submit]")
    page.goto(f"{live_server.url}/surveys/manage/dhp-translation/v1/")
    assert "1 respondent" in page.content()
    shares = page.locator(".stack").first.get_attribute("aria-label")
    assert shares == "accuracy 0.00, fluency 1.00"
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "survey-weights.png"), full_page=True)


def test_revoking_an_invitation_asks_first_and_a_dismissed_question_changes_nothing(live_server, invitation, page):  # noqa: F811
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw")
    page.click("button[type=submit]")
    manage = f"{live_server.url}/surveys/manage/{invitation.version.survey.slug}/"
    page.goto(manage)
    questions = []
    page.once("dialog", lambda dialog: (questions.append(dialog.message), dialog.dismiss()))
    page.click("button:has-text('revoke')")
    page.wait_for_timeout(300)
    assert questions
    assert "Revoke this invitation?" in questions[0]
    page.goto(manage)
    assert page.locator("button:has-text('revoke')").count() == 1, "dismissed: the invitation still stands"
    page.once("dialog", lambda dialog: dialog.accept())
    with page.expect_navigation():
        page.click("button:has-text('revoke')")
    assert page.locator("button:has-text('revoke')").count() == 0
