"""No page shows a person a link its page will refuse them: walked from the home page as each role, on
the demo's data, every link followed (three clicks deep) answers anything but 403. Links are shown by the
rule that guards their page (evalhub.accounts.roles.may_open), so a new page or role needs no new test."""

from __future__ import annotations

import html
import re

import pytest

from evalhub.accounts.roles import ADJUDICATOR, ADMIN, EXPERT, VIEWER, may_open
from evalhub.catalog.demo import do_load_demo
from evalhub.home.demo import do_start_demo_runs
from tests.conftest import make_user

pytestmark = pytest.mark.django_db(transaction=True)  # the demo's debate batches write from their own thread

LINK = re.compile(r'href="(/[^"#]*)"')
NOT_WALKED = ("/static/", "/logout", "/admin/")  # files; leaving; Django's admin keeps its own staff rule
CLICKS = 3


def _walk(client, user) -> dict[str, tuple[int, str]]:
    client.force_login(user)
    seen: dict[str, tuple[int, str]] = {}
    frontier = [("/", "")]
    for _ in range(CLICKS + 1):
        following = []
        for path, linked_from in frontier:
            if path in seen:
                continue
            answer = client.get(path)
            seen[path] = (answer.status_code, linked_from)
            if answer.status_code == 200 and "html" in answer.get("Content-Type", ""):
                for link in set(LINK.findall(answer.content.decode())):
                    link = html.unescape(link)
                    if not link.startswith(NOT_WALKED) and link not in seen:
                        following.append((link, path))
        frontier = following
    return seen


def test_no_link_a_role_is_shown_leads_to_a_page_that_refuses_it(client, tmp_path):
    do_load_demo()
    do_start_demo_runs(tmp_path / "tiny-model")
    walks = {role: _walk(client, make_user(f"walker-{role}", role)) for role in (ADMIN, VIEWER, EXPERT, ADJUDICATOR)}
    refused = {
        role: {path: linked_from for path, (status, linked_from) in walk.items() if status == 403}
        for role, walk in walks.items()
    }
    assert refused == {role: {} for role in walks}, "links to pages that refuse their reader (page: linked from)"
    # Far enough to mean something: every board, model and run for a reader; the forms too for an admin.
    assert len(walks[VIEWER]) > 150
    assert len(walks[ADMIN]) > len(walks[VIEWER])
    assert "/adjudicate/" in walks[ADJUDICATOR], "an adjudicator's home leads to the queue"


def test_may_open_reads_the_roles_from_the_view_itself(db):
    viewer, adjudicator = make_user("v", VIEWER), make_user("a", ADJUDICATOR)
    assert may_open(viewer, "/leaderboards/?benchmark=x") and not may_open(adjudicator, "/leaderboards/")
    assert may_open(adjudicator, "/adjudicate/rate/?benchmark=x") and not may_open(viewer, "/adjudicate/rate/")
    assert may_open(viewer, "/no-such-page/"), "a path no view answers is left to its 404"
