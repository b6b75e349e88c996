"""A new team's first hour, walked in a real browser (issue 81, item 4): an upload previewed and then
imported, its message's links opening on the new data (the judge lab filtered to it, the rating screen
with its benchmark chosen), the new-debate form offering models and not the voters that came with the
file, and a viewer shown no link to a page that would refuse them."""

from __future__ import annotations

import pytest

from tests.browser.test_import_pages import arena_battles
from tests.browser.test_login_and_browse import log_in, page  # noqa: F401  (fixture)
from tests.conftest import make_user, requires_chromium
from tests.judgelab.test_import_scores_page import PEOPLE_CSV

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def upload(page, url: str, name: str, data: bytes, benchmark: str, *, button: str) -> None:  # noqa: F811
    page.goto(url)
    page.set_input_files("#id_file", files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}])
    page.fill("#id_benchmark", benchmark)
    page.check("#id_create_models")
    page.click(f"form.card button:text('{button}')")


@pytest.fixture
def people(db):
    """An admin who also adjudicates, and a viewer (made before the browser's event loop runs)."""
    make_user("ida", "admin", "adjudicator")
    make_user("vera", "viewer")


def test_an_import_previewed_then_followed_to_pages_that_open_on_its_data(live_server, people, page):  # noqa: F811
    base = live_server.url
    page.goto(f"{base}/login/")
    log_in(page, base, "pw", "ida")
    page.wait_for_url(f"{base}/")

    upload(page, f"{base}/judges/import/", "battles.jsonl", arena_battles(), "arena", button="Preview the first rows")
    preview = page.locator("#import-preview").inner_text()
    assert "The first rows as they would be imported" in preview and "arena_user_0" in preview
    upload(page, f"{base}/judges/import/", "battles.jsonl", arena_battles(), "arena", button="Import")
    page.wait_for_url(f"{base}/judges/")
    page.click(".messages >> text=the judge lab")
    page.wait_for_url(f"{base}/judges/?benchmark=arena")
    assert page.locator("select[name=benchmark]").input_value() == "arena", "opened on the new data"

    upload(page, f"{base}/judges/import-scores/", "people.csv", PEOPLE_CSV, "set", button="Import")
    page.wait_for_url(f"{base}/judges/pointwise/?benchmark=set")
    page.click(".messages >> text=the rating screen")
    page.wait_for_url(f"{base}/adjudicate/rate/?benchmark=set")
    assert page.locator("#id_benchmark option:checked").inner_text().strip() != "---------"
    assert "This field is required" not in page.content()

    page.goto(f"{base}/debates/new/")
    offered = page.locator("#id_model_a option").all_inner_texts()
    assert "alpha" in offered and "mockllm-model" in offered
    assert not [name for name in offered if "arena_user" in name or "human-ana" in name], offered

    page.context.clear_cookies()  # signed out: the viewer's turn
    page.goto(f"{base}/login/")
    log_in(page, base, "pw", "vera")
    page.wait_for_url(f"{base}/")
    page.goto(f"{base}/judges/pointwise/?benchmark=set")
    assert page.locator("a[href^='/adjudicate/']").count() == 0, "a viewer is shown no link to a 403"
