"""A team's own data through the upload pages in a real browser, then the pages that should show it:
Arena battles on the board with its default filters (their voters as people), and a zipped Inspect
eval set on the pointwise page."""

from __future__ import annotations

import json

import pytest

from tests.browser.test_login_and_browse import log_in, page  # noqa: F401  (fixture)
from tests.conftest import make_user, requires_chromium

pytestmark = [requires_chromium, pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def ada(db):
    return make_user("ada", "admin")


def arena_battles() -> bytes:
    """LMArena's battle records (its dataset's layout), voters `arena_user_…`."""
    lines = []
    for n, (a, b, winner) in enumerate([("alpha", "beta", "model_a"), ("beta", "gamma", "model_b")] * 6):
        prompt = f"Question {n}?"
        lines.append(
            json.dumps(
                {
                    "question_id": f"q{n}",
                    "model_a": a,
                    "model_b": b,
                    "winner": winner,
                    "judge": f"arena_user_{n % 3}",
                    "turn": 1,
                    "conversation_a": [{"role": "user", "content": prompt}, {"role": "assistant", "content": a}],
                    "conversation_b": [{"role": "user", "content": prompt}, {"role": "assistant", "content": b}],
                    "anony": True,
                }
            )
        )
    return "\n".join(lines).encode()


def test_arena_battles_uploaded_show_on_the_board_with_its_default_filters_and_their_voters_as_people(
    live_server,
    ada,
    page,  # noqa: F811
):
    page.goto(f"{live_server.url}/login/")
    log_in(page, live_server.url, "pw", "ada")
    page.goto(f"{live_server.url}/judges/import/")
    page.set_input_files(
        "#id_file", files=[{"name": "battles.jsonl", "mimeType": "application/json", "buffer": arena_battles()}]
    )
    page.fill("#id_benchmark", "arena")
    page.check("#id_create_models")
    page.click("form.card button[type=submit]")
    page.wait_for_url(f"{live_server.url}/judges/")
    page.click("text=the pairwise board")  # the import's message links to the board, filtered to it
    page.wait_for_selector("#ratings-table")
    board = page.locator("#ratings-table").inner_text()
    assert all(model in board for model in ("alpha", "beta", "gamma"))
    page.goto(f"{live_server.url}/judges/?benchmark=arena")
    people = page.locator("section.card:has(h2:text('Among people'))").inner_text()
    assert "3 people" in people and "arena_user_0" in people


def test_a_zipped_inspect_eval_set_uploaded_shows_its_scorers_on_the_pointwise_page(
    live_server,
    ada,
    tmp_path,
    page,  # noqa: F811
):
    from tests.judgelab.test_import_scores_page import PEOPLE_CSV, eval_set_zip
    from tests.worker_threads import in_a_thread_of_its_own

    bundle = in_a_thread_of_its_own(lambda: eval_set_zip(tmp_path))  # outside Playwright's event loop
    page.goto(f"{live_server.url}/login/")
    log_in(page, live_server.url, "pw", "ada")
    for name, data in (("people.csv", PEOPLE_CSV), ("eval-set.zip", bundle)):
        page.goto(f"{live_server.url}/judges/import-scores/")
        page.set_input_files("#id_file", files=[{"name": name, "mimeType": "application/octet-stream", "buffer": data}])
        page.fill("#id_benchmark", "set")
        page.check("#id_create_models")
        page.click("form.card button[type=submit]")
        page.wait_for_url(f"{live_server.url}/judges/pointwise/?benchmark=set")
    section = page.locator("#criterion-match").inner_text()
    assert "match" in section and "1 person scored 2 responses" in section
    assert "Imported eval-set.zip" in page.content()
