"""The pairwise board is kept, as the win-rate boards and the judge lab are (issue 79): a board counted
from many battles is a worker's to compute; pages show the last one marked with its age meanwhile, its
exports answer 503 with Retry-After, and a model's page takes its rating from the same kept board."""

from __future__ import annotations

import pytest

from evalhub.dashboards import pairwise
from evalhub.debates.models import DebateStatus

pytestmark = pytest.mark.django_db


@pytest.fixture
def large(arena, monkeypatch):
    """Five battles, a board 'large' from four; the worker's refreshes recorded, run on demand."""
    for verdict in (1, 1, 2):
        arena.debate("alpha", "beta", verdict=verdict)
    arena.debate("beta", "gamma", verdict=1)
    arena.debate("alpha", "gamma", verdict=0, status=DebateStatus.ADJUDICATED)
    monkeypatch.setattr(pairwise, "BACKGROUND_AT", 4)
    asked, computed = [], []

    class Task:
        def apply_async(self, args=()):
            asked.append(args[0])

    real = pairwise.compute_and_keep
    monkeypatch.setattr(pairwise, "task_named", lambda name: Task())
    monkeypatch.setattr(pairwise, "compute_and_keep", lambda *args: computed.append(1) or real(*args))

    def worker() -> None:
        from evalhub.dashboards.tasks import refresh_pairwise_board_task

        refresh_pairwise_board_task(asked[-1])  # what a worker runs: the board computed, then drawn

    return arena, asked, computed, worker


def test_a_large_board_is_a_workers_and_the_pages_show_the_last_one_marked(client, viewer, login, large):
    arena, asked, computed, worker = large
    client = login(viewer)
    first = client.get("/leaderboards/").content.decode()
    assert 'id="board-pending"' in first and "A worker is computing this board" in first
    assert computed == [] and len(asked) == 1, "no board computed in the request; one worker asked"
    assert client.get("/leaderboards/ratings.csv").status_code == 503, "a file never holds what is not current"
    assert 'id="rating-pending"' in client.get("/models/alpha/").content.decode()
    assert len(asked) == 1, "one worker asked, however many pages ask"

    worker()
    page = client.get("/leaderboards/")
    shown = page.content.decode()
    assert "5 battles" in shown and "board-pending" not in shown and "board-freshness" not in shown
    assert "dashboards/_pairwise_board.html" not in [t.name for t in page.templates], "drawn by the worker"
    assert 'href="/leaderboards/ratings.csv?source=consensus&amp;source=human"' in shown, "its own filters"
    assert client.get("/leaderboards/ratings.csv").status_code == 200

    arena.debate("beta", "gamma", verdict=2)  # the data moves on
    stale = client.get("/leaderboards/").content.decode()
    assert "5 battles" in stale and 'id="board-freshness"' in stale, "the last board, marked with its age"
    assert len(computed) == 1 and len(asked) == 2, "still none computed in a request"
    assert 'id="rating-freshness"' in client.get("/models/alpha/").content.decode()
    waiting = client.get("/leaderboards/ratings.csv")
    assert waiting.status_code == 503 and waiting["Retry-After"] == "30"

    worker()
    fresh = client.get("/leaderboards/").content.decode()
    assert "6 battles" in fresh and "board-freshness" not in fresh
    assert "rating-freshness" not in client.get("/models/alpha/").content.decode()


def test_a_small_board_is_computed_in_the_request(client, viewer, login, arena):
    arena.debate("alpha", "beta", verdict=1)
    page = login(viewer).get("/leaderboards/").content.decode()
    assert "1 battle" in page and "board-pending" not in page


def test_a_board_the_new_data_leave_unchanged_is_not_drawn_again(client, viewer, login, arena):
    """Its three matrices of every model were rendered again whenever anything moved (1.5 CPU-s at 200 models)."""

    def drawn(response) -> bool:
        return "dashboards/_pairwise_board.html" in [template.name for template in response.templates]

    client = login(viewer)
    arena.debate("alpha", "beta", verdict=1)
    assert drawn(client.get("/leaderboards/"))
    arena.debate("alpha", "beta", verdict=None, status=DebateStatus.RUNNING)  # data moved, the board did not
    unchanged = client.get("/leaderboards/")
    assert not drawn(unchanged) and "1 battle" in unchanged.content.decode()
    arena.debate("alpha", "beta", verdict=2)
    moved = client.get("/leaderboards/")
    assert drawn(moved) and "2 battles" in moved.content.decode()


def test_a_small_boards_counts_are_read_once_per_new_state_of_the_data(client, viewer, login, arena, monkeypatch):
    """The size check read the counts, then the board read them again (a judge's board: every label of it twice)."""
    from evalhub.dashboards import counts

    calls = []
    real = counts.battle_counts
    monkeypatch.setattr(pairwise, "battle_counts", lambda *args, **kwargs: calls.append(1) or real(*args, **kwargs))
    arena.debate("alpha", "beta", verdict=1)
    assert "1 battle" in login(viewer).get("/leaderboards/").content.decode()
    assert len(calls) == 1


def test_a_board_kept_by_an_evalhub_whose_boards_had_other_fields_is_not_read_back(client, viewer, login, arena):
    """A board of the previous shape (no `digest`) was read back and the page failed on the missing field."""
    from django.core.cache import cache

    from evalhub.reads.battles import Filters
    from evalhub.reads.caching import fingerprint

    arena.debate("alpha", "beta", verdict=1)
    filters, stamp = Filters(), fingerprint()
    old = {k: v for k, v in pairwise.pairwise_board(filters, stamp).items() if k != "digest"}
    cache.set(f"dashboards:pairwise_board:{filters.key}", {"board": old, "stamp": stamp}, None)  # the old key
    assert pairwise.kept_key(filters) != f"dashboards:pairwise_board:{filters.key}"
    assert pairwise.board_state(filters, stamp).board["digest"], "computed afresh, in today's shape"
