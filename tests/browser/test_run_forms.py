"""The judge form in a real browser: naming a reasoning model makes the temperature read-only and
says why; naming another model gives it back."""

from __future__ import annotations

import pytest

from tests.browser.test_login_and_browse import log_in, page  # noqa: F401 (fixture)
from tests.conftest import make_user, requires_chromium
from tests.debates.conftest import demo, make_run  # noqa: F401 (fixtures)

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def a_run(make_run):  # noqa: F811 (the fixture imported above)
    make_user("adele", "admin")
    return make_run()


def test_the_temperature_is_read_only_while_the_judge_named_is_a_reasoning_model(
    live_server,
    a_run,
    page,  # noqa: F811
):
    page.goto(f"{live_server.url}/login/")
    log_in(page, live_server.url, "pw", "adele")
    page.goto(f"{live_server.url}/debates/runs/{a_run.pk}/judges/")
    page.wait_for_load_state("load")
    temperature = page.locator("#id_temperature")
    assert temperature.get_attribute("readonly") is None
    page.fill("#id_judge", "openai:gpt-5-mini")
    page.wait_for_selector("#id_temperature[readonly]")
    assert "Not sent: reasoning models" in page.locator("#id_temperature + small").inner_text()
    page.fill("#id_judge", "openai:gpt-5-chat-latest")
    page.wait_for_selector("#id_temperature:not([readonly])")
    page.fill("#id_judge", "openai-compatible:http://h/v1|local?reasoning=true")
    page.wait_for_selector("#id_temperature[readonly]")
