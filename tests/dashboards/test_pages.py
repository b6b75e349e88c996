from __future__ import annotations

import csv
import io
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.core.scaleeval.debate import DebateOutcome
from evalhub.debates.actions import do_finish_debates
from evalhub.debates.models import DebateStatus


@pytest.fixture
def played(arena):
    for verdict in (1, 1, 2):
        arena.debate("alpha", "beta", verdict=verdict)
    arena.debate("beta", "gamma", verdict=1, category="writing")
    arena.debate("alpha", "gamma", verdict=0, status=DebateStatus.ADJUDICATED)
    return arena


def test_leaderboards_need_a_login_and_a_role(client, played, outsider, viewer, adjudicator, login):
    assert client.get("/leaderboards/").status_code == 302
    assert login(outsider).get("/leaderboards/").status_code == 403
    assert login(outsider).get("/models/alpha/").status_code == 403
    assert login(outsider).get("/leaderboards/ratings.csv").status_code == 403
    assert login(viewer).get("/leaderboards/").status_code == 200
    assert login(adjudicator).get("/models/alpha/").status_code == 403, "adjudicators judge blind"


def test_the_leaderboard_shows_ratings_matrices_and_empty_states(client, played, viewer, login):
    page = login(viewer).get("/leaderboards/").content.decode()
    assert "5 battles" in page
    assert "Debate consensus: 4" in page
    assert "Human adjudication: 1" in page
    assert page.count('<a href="/models/alpha/">ALPHA</a>') == 1
    assert 'aria-label="Win-rate matrix"' in page
    assert 'aria-label="Battle-count matrix"' in page
    assert "<svg" in page
    assert 'class="whisker"' in page
    assert "No finished GEM run yet" in page
    assert "No judge has been measured yet" in page


def test_an_empty_database_tells_what_to_run(client, viewer, login):
    page = login(viewer).get("/leaderboards/").content.decode()
    assert "No battles match" in page
    assert "run_debates" in page


def test_model_output_and_names_are_escaped(client, played, viewer, login):
    played.models["alpha"].display_name = "<script>alert(1)</script>"
    played.models["alpha"].save()
    for url in ("/leaderboards/", "/models/beta/"):
        page = login(viewer).get(url).content.decode()
        assert "<script>alert(1)</script>" not in page
        assert "&lt;script&gt;" in page


def test_filters_narrow_the_board_and_a_forged_source_is_a_clear_400(client, played, viewer, login):
    client = login(viewer)
    page = client.get("/leaderboards/?source=human").content.decode()
    assert "1 battle (Human adjudication: 1)." in page
    forged = client.get("/leaderboards/?source=everything")
    assert forged.status_code == 400
    assert "cannot be used" in forged.content.decode()
    for url in ("/leaderboards/ratings.csv?source=everything", "/models/alpha/record.json?source=everything"):
        export = client.get(url)
        assert export.status_code == 400
        assert "source: Select a valid choice" in export.content.decode()
    partial = client.get("/leaderboards/?scenario=writing", headers={"HX-Request": "true", "HX-Target": "pairwise"})
    assert partial.content.decode().lstrip().startswith('<section id="pairwise">')
    assert "GRE-bench" not in partial.content.decode()


def test_exports_carry_the_numbers_on_the_page(client, played, viewer, login):
    client = login(viewer)
    ratings = json.loads(client.get("/leaderboards/ratings.json").content)
    assert {r["model"] for r in ratings} == {"alpha", "beta", "gamma"}
    assert sum(r["battles"] for r in ratings) == 2 * 5
    assert all(isinstance(r[key], int) for r in ratings for key in ("rank", "battles", "wins", "losses", "ties"))
    assert all(isinstance(r[key], float) for r in ratings for key in ("rating", "low", "high", "win_rate"))
    page = client.get("/leaderboards/").content.decode()
    for r in ratings:
        assert f"{r['low']:.0f} – {r['high']:.0f}" in page
    rows = list(csv.DictReader(io.StringIO(client.get("/leaderboards/win_rates.csv").content.decode())))
    alpha_beta = next(r for r in rows if (r["model"], r["opponent"]) == ("alpha", "beta"))
    assert alpha_beta["battles"] == "3"
    assert float(alpha_beta["win_rate"]) == pytest.approx(2 / 3)
    beta_alpha = next(r for r in rows if (r["model"], r["opponent"]) == ("beta", "alpha"))
    assert int(alpha_beta["wins"]) + int(alpha_beta["losses"]) + int(alpha_beta["ties"]) == 3
    assert (alpha_beta["wins"], alpha_beta["losses"]) == (beta_alpha["losses"], beta_alpha["wins"])
    assert float(alpha_beta["win_rate"]) == pytest.approx((int(alpha_beta["wins"]) + int(alpha_beta["ties"]) / 2) / 3)
    human_only = json.loads(client.get("/leaderboards/ratings.json?source=human").content)
    assert sum(r["battles"] for r in human_only) == 2
    assert client.get("/leaderboards/ratings.xml").status_code == 404
    record = json.loads(client.get("/models/alpha/record.json").content)
    assert {(r["opponent"], r["wins"], r["losses"], r["ties"]) for r in record} == {
        ("beta", 2, 1, 0),
        ("gamma", 0, 0, 1),
    }
    for table in ("by_criterion", "by_scenario", "gre_bench"):
        assert client.get(f"/models/alpha/{table}.csv").status_code == 200


def test_the_model_page_shows_its_rating_record_breakdowns_and_settled_debates_only(client, played, viewer, login):
    waiting = played.debate("alpha", "beta", verdict=None, status=DebateStatus.UNRESOLVED)
    page = login(viewer).get("/models/alpha/").content.decode()
    assert "2 won · 1 lost · 1 tied" in page
    assert "rank" in page
    assert "95%" in page
    assert f"/debates/{waiting.pk}/" not in page  # never linked while people still have to judge it
    lost = played.runs[("alpha", "beta", "helpfulness", "")].debates.filter(verdict=2).get()
    assert f"/debates/{lost.pk}/" in page
    assert "No DHP, YESciEval or single-judge run names this model" in page
    assert page.count("As a judge</h2>") == 1
    assert "As a judge</h3>" not in page  # one section, not two that contradict each other
    assert login(viewer).get("/models/nobody/").status_code == 404


def test_a_judge_model_page_shows_its_agreement_and_cost(client, played, viewer, login):
    debates = list(played.runs[("alpha", "beta", "helpfulness", "")].debates.all())
    played.judge("openai:gpt-judge", {d: [d.verdict] for d in debates})
    page = login(viewer).get("/models/judge-x/").content.decode()
    assert "openai:gpt-judge" in page
    assert "1.000" in page
    assert "(3/3)" in page
    assert "3 calls (0 cached)" in page


def test_the_leaderboard_makes_the_same_number_of_queries_whatever_the_data(client, played, viewer, login):
    client = login(viewer)

    def cold_queries() -> int:
        from django.core.cache import cache

        cache.clear()
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/leaderboards/").status_code == 200
        return len(captured)

    first = played.debate("beta", "gamma", verdict=2)
    played.judge("openai:gpt-judge", {first: [2]})
    small = cold_queries()
    for _ in range(10):
        d = played.debate("beta", "gamma", verdict=2)
        played.judge("openai:gpt-judge", {d: [2, 2]}, reversed_verdicts={d: [1]})
    assert cold_queries() == small
    with CaptureQueriesContext(connection) as warm:
        assert client.get("/leaderboards/").status_code == 200
    assert len(warm) <= 5, [q["sql"][:80] for q in warm.captured_queries]  # session, user, roles, fingerprint, names


def test_the_model_page_query_count_does_not_grow_with_the_data(client, played, viewer, login, queries_for):
    from django.core.cache import cache

    client = login(viewer)
    cache.clear()
    small = queries_for(client, "/models/alpha/")
    for _ in range(10):
        played.debate("alpha", "gamma", verdict=1)
    cache.clear()
    assert queries_for(client, "/models/alpha/") == small
    cache.clear()
    with CaptureQueriesContext(connection) as cold:
        client.get("/models/alpha/")
    debate_reads = [q["sql"] for q in cold.captured_queries if 'FROM "debates_debate"' in q["sql"]]
    assert len(debate_reads) == 2, "the model page reads counts; of the debates, only its two example lists"
    assert all(sql.endswith("LIMIT 5") for sql in debate_reads)


def test_a_cached_board_is_served_until_a_new_verdict_lands(client, played, viewer, login, monkeypatch):
    client = login(viewer)
    from evalhub.dashboards import pairwise

    calls = []
    real = pairwise.compute_and_keep
    monkeypatch.setattr(pairwise, "compute_and_keep", lambda *args: calls.append(1) or real(*args))
    assert "5 battles" in client.get("/leaderboards/").content.decode()
    assert "5 battles" in client.get("/leaderboards/").content.decode()
    assert len(calls) == 1

    unresolved = played.debate("alpha", "beta", verdict=None, status=DebateStatus.RUNNING)
    do_finish_debates([(unresolved, DebateOutcome(verdict=1, rounds_used=1, turns=[]))])
    assert "6 battles" in client.get("/leaderboards/").content.decode()
    assert len(calls) == 2


def test_a_human_authors_page_does_not_suggest_generating_responses_for_them(viewer, login):
    from evalhub.catalog.models import LanguageModel

    LanguageModel.objects.create(slug="human-reviewer-1", display_name="Reviewer 1", is_human=True)
    body = login(viewer).get("/models/human-reviewer-1/").content.decode()
    assert "generate_responses" not in body
    assert "A human author writes no generated responses" in body


def test_a_model_whose_battles_are_all_filtered_out_says_so_and_links_to_them(client, arena, viewer, login):
    debates = [arena.debate("alpha", "beta", verdict=None, status=DebateStatus.UNRESOLVED) for _ in range(3)]
    arena.judge("openai:judge", {debate: [1] for debate in debates})  # single-judge battles only
    page = login(viewer).get("/models/alpha/?source=consensus&source=human").content.decode()
    assert "No pairwise battles for this model under the current filters" in page
    assert "3 from single llm judges" in page
    assert "yet: put it in a debate run" not in page
    assert '/models/alpha/?source=single_judge">Show them</a>' in page
    shown = client.get("/models/alpha/?source=single_judge").content.decode()
    assert "3 won · 0 lost · 0 tied" in shown
    unticked = client.get("/models/alpha/").content.decode()
    assert "3 won · 0 lost · 0 tied" in unticked, "no source ticked: what there is (no panel or person decided)"


def test_a_model_with_no_battle_at_all_is_told_how_to_get_some(client, arena, viewer, login):
    page = login(viewer).get("/models/gamma/").content.decode()
    assert "No pairwise battles for this model yet: put it in a debate run" in page
    assert "under the current filters" not in page


def test_a_rating_links_to_the_battles_it_comes_from_under_the_same_filters(client, played, viewer, login):
    page = login(viewer).get("/leaderboards/?criterion=helpfulness").content.decode()
    # The board's own filters, the sources it counted named (a drawn board is shared by every request).
    query = "source=consensus&amp;source=human&amp;criterion=helpfulness"
    assert f'href="/models/alpha/?{query}" title="the battles behind this rating"' in page
    battles = client.get("/models/alpha/?source=consensus&source=human&criterion=helpfulness").content.decode()
    assert 'id="record"' in battles
    assert '<a href="/debates/' in battles, "each settled debate behind it is listed"


def test_the_board_offers_arena_ranks_sandwich_intervals_and_pair_reweighting(client, played, viewer, login):
    from evalhub.core.statistics import bradley_terry as bt
    from evalhub.dashboards.pairwise import pairwise_board
    from evalhub.reads.battles import Filters
    from evalhub.reads.caching import fingerprint

    client = login(viewer)
    page = client.get("/leaderboards/?interval=sandwich&reweighted=on").content.decode()
    assert "robust (sandwich) standard errors" in page
    assert "1 / max(battles of its pair, 50)" in page
    board = pairwise_board(Filters(interval="sandwich", reweighted=True), fingerprint())
    expected = bt.leaderboard(
        [
            ("alpha", "beta", "a"),
            ("alpha", "beta", "a"),
            ("alpha", "beta", "b"),
            ("beta", "gamma", "a"),
            ("alpha", "gamma", "tie"),
        ],
        interval=bt.SANDWICH,
        reweighted=True,
    )
    got = {r["model"]: (r["rating"], r["low"], r["high"]) for r in board["ratings"]}
    for row in expected.ratings:
        assert got[row.model] == pytest.approx((row.rating, row.low, row.high))
    assert client.get("/leaderboards/?interval=guess").status_code == 400
