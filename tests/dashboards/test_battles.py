from __future__ import annotations

from evalhub.catalog.models import LanguageModel
from evalhub.core.statistics import bradley_terry as bt
from evalhub.dashboards.pairwise import pairwise_board
from evalhub.debates.models import DebateStatus
from evalhub.reads.battles import CONSENSUS, HUMAN, SINGLE_JUDGE, Filters, load_battles
from evalhub.reads.caching import fingerprint


def outcomes(battles, source=None):
    return sorted((b.model_a, b.model_b, b.outcome) for b in battles if source is None or b.source == source)


def test_a_consensus_verdict_becomes_a_battle_won_by_the_model_whose_response_was_preferred(arena):
    arena.debate("alpha", "beta", verdict=1)  # submission 1 = alpha's: alpha wins
    arena.debate("alpha", "beta", verdict=1, swapped=True)  # submission 1 = beta's: beta wins
    arena.debate("alpha", "beta", verdict=0)
    assert outcomes(load_battles(fingerprint(), with_judges=True)) == [
        ("alpha", "beta", "a"),
        ("alpha", "beta", "b"),
        ("alpha", "beta", "tie"),
    ]


def test_only_settled_debates_count_and_an_adjudicated_one_is_a_human_battle(arena):
    arena.debate("alpha", "beta", verdict=2, status=DebateStatus.ADJUDICATED)
    arena.debate("alpha", "beta", verdict=None, status=DebateStatus.UNRESOLVED)
    arena.debate("alpha", "beta", verdict=None, status=DebateStatus.FAILED)
    arena.debate("alpha", "beta", verdict=None, status=DebateStatus.PENDING)
    battles = load_battles(fingerprint(), with_judges=True)
    assert [(b.source, b.outcome) for b in battles] == [(HUMAN, "b")]


def test_a_single_judge_battle_is_the_majority_of_its_samples_in_the_debates_order(arena):
    d1 = arena.debate("alpha", "gamma", verdict=1)
    d2 = arena.debate("alpha", "gamma", verdict=1, swapped=True)
    d3 = arena.debate("alpha", "gamma", verdict=1)
    # d1: 1, 1, 2 → 1 → alpha (the reversed order only measures position bias). d2 (swapped): 2 →
    # alpha's response was second → alpha. d3: 1 vs 2 is a tied majority → no battle at all.
    arena.judge("openai:gpt-judge", {d1: [1, 1, 2], d2: [2], d3: [1, 2]}, reversed_verdicts={d1: [1, 1, 1]})
    judged = [b for b in load_battles(fingerprint(), with_judges=True) if b.source == SINGLE_JUDGE]
    assert sorted((b.debate, b.outcome) for b in judged) == [(d1.pk, "a"), (d2.pk, "a")]
    assert {b.judge for b in judged} == {"openai:gpt-judge"}
    assert not [b for b in load_battles(fingerprint(), with_judges=False) if b.source == SINGLE_JUDGE]


def test_verdicts_under_a_degraded_criteria_prompt_are_not_battles(arena):
    d = arena.debate("alpha", "beta", verdict=1)
    arena.judge("openai:gpt-judge", {d: [2]}, variant="gibberish")
    assert outcomes(load_battles(fingerprint(), with_judges=True), SINGLE_JUDGE) == []


def test_filters_keep_source_criterion_scenario_and_benchmark(arena):
    arena.debate("alpha", "beta", verdict=1, category="math")
    arena.debate("alpha", "beta", verdict=2, category="writing", status=DebateStatus.ADJUDICATED)
    battles = load_battles(fingerprint(), with_judges=True)
    assert len([b for b in battles if Filters(sources=(CONSENSUS,)).keep(b)]) == 1
    assert len([b for b in battles if Filters(scenario="writing").keep(b)]) == 1
    assert len([b for b in battles if Filters(criterion="other").keep(b)]) == 0
    assert len([b for b in battles if Filters(benchmark="bench").keep(b)]) == 2


def test_battles_say_which_responses_were_compared_and_can_be_filtered_to_one_hint_tier(arena):
    arena.debate("alpha", "beta", verdict=1)
    arena.debate("alpha", "beta", verdict=2, variant="answer:1h")
    arena.debate("alpha", "beta", verdict=2, variant="answer:1h")
    battles = load_battles(fingerprint(), with_judges=False)
    assert sorted(b.responses for b in battles) == ["answer:1h", "answer:1h", "imported"]
    assert [b.outcome for b in battles if Filters(responses="imported").keep(b)] == ["a"]
    assert [b.outcome for b in battles if Filters(responses="answer:1h").keep(b)] == ["b", "b"]
    board = pairwise_board(Filters(responses="answer:1h"), fingerprint())
    assert board["battles"] == 2
    assert board["options"]["responses"] == ["answer:1h", "imported"]


def test_the_pairwise_board_is_the_bradley_terry_fit_of_the_filtered_battles(arena):
    for verdict in (1, 1, 1, 2, 0):
        arena.debate("alpha", "beta", verdict=verdict)
    for verdict in (1, 2, 2):
        arena.debate("beta", "gamma", verdict=verdict)
    arena.debate("alpha", "gamma", verdict=2, status=DebateStatus.ADJUDICATED)
    board = pairwise_board(Filters(), fingerprint())
    direct = bt.leaderboard(
        [("alpha", "beta", o) for o in "a a a b tie".split()]
        + [("beta", "gamma", o) for o in "a b b".split()]
        + [("alpha", "gamma", "b")],
        rounds=200,
        seed=0,
    )
    assert [(r["model"], r["rating"], r["low"], r["high"], r["rank"]) for r in board["ratings"]] == [
        (r.model, r.rating, r.low, r.high, r.rank) for r in direct.ratings
    ]
    assert board["battles"] == 9
    assert board["by_source"] == {CONSENSUS: 8, HUMAN: 1}
    alpha_row = next(row for row in board["matrix"] if row["model"] == "alpha")
    vs_beta = next(c for c in alpha_row["cells"] if c["opponent"] == "beta")
    assert vs_beta == {
        "opponent": "beta",
        "games": 5,
        "win_rate": (3 + 0.5) / 5,
        "beats": direct.beats[direct.models.index("alpha")][direct.models.index("beta")],
        "wins": 3,
        "losses": 1,
        "ties": 1,
    }
    beta_row = next(row for row in board["matrix"] if row["model"] == "beta")
    vs_alpha = next(c for c in beta_row["cells"] if c["opponent"] == "alpha")
    assert (vs_alpha["wins"], vs_alpha["losses"], vs_alpha["ties"]) == (1, 3, 1), "the same battles, seen from beta"
    only_math_people = pairwise_board(Filters(sources=(HUMAN,)), fingerprint())
    assert only_math_people["battles"] == 1


def test_a_pair_of_models_compared_only_with_each_other_is_ranked_in_its_own_group(arena, login, viewer):
    for verdict in (1, 1, 2):
        arena.debate("alpha", "beta", verdict=verdict)
    arena.models["delta"] = LanguageModel.objects.create(slug="delta", display_name="DELTA")
    arena.models["omega"] = LanguageModel.objects.create(slug="omega", display_name="OMEGA")
    for verdict in (1, 1):
        arena.debate("delta", "omega", verdict=verdict)
    board = pairwise_board(Filters(), fingerprint())
    groups = {r["model"]: r["group"] for r in board["ratings"]}
    assert board["groups"] == 2
    assert groups["alpha"] == groups["beta"] != groups["delta"] == groups["omega"]
    body = login(viewer).get("/leaderboards/").content.decode()
    assert "2 separate groups" in body


def test_style_control_is_fitted_on_the_responses_texts_and_orders_the_board(arena, login, viewer):
    import random

    rng = random.Random(1)
    for _ in range(60):
        debate = arena.debate("alpha", "beta", verdict=1 if rng.random() < 0.5 else 2)
        debate.response_a.text = "# Title\n\n- **point**\n" * rng.randint(1, 6)
        debate.response_a.save()
    board = pairwise_board(Filters(style=True), fingerprint())
    assert board["style"]["battles"] == 60
    assert set(board["style"]["coefficients"]) == {
        "length",
        "headers",
        "lists",
        "bold",
    }
    assert all(r["style_rating"] is not None for r in board["ratings"])
    # The Rank column is the style-controlled one the board is ordered by (Arena's), the raw beside it.
    from evalhub.core.statistics.bradley_terry import ranks

    rows = board["ratings"]
    assert [r["style_rank"] for r in rows] == ranks([r["style_low"] for r in rows], [r["style_high"] for r in rows])
    body = login(viewer).get("/leaderboards/?style=on").content.decode()
    assert "Style-controlled" in body and "Rank, style-controlled (raw)" in body
    first = rows[0]
    assert f'title="without style control: rank {first["rank"]}">{first["style_rank"]} ' in body


def test_a_group_with_too_few_battles_gets_no_style_controlled_rating_and_the_board_says_why(arena, login, viewer):
    for verdict in (1, 2, 1, 1, 2, 1):
        arena.debate("alpha", "beta", verdict=verdict)
    board = pairwise_board(Filters(style=True), fingerprint())
    assert all(r["style_rating"] is None for r in board["ratings"])
    assert "6 battles for 2 models" in board["style"]["skipped"]["alpha"]
    body = login(viewer).get("/leaderboards/?style=on").content.decode()
    assert "style control needs at least 50" in body


def test_a_benchmark_judged_only_by_single_judges_can_be_chosen_before_that_source_is_ticked(arena):
    from evalhub.catalog.models import Benchmark

    arena.debate("alpha", "beta", verdict=1)
    arena.benchmark = Benchmark.objects.create(slug="judged-alone", name="Judged alone")
    arena.runs.clear()
    waiting = arena.debate("alpha", "beta", verdict=None, status=DebateStatus.UNRESOLVED)
    arena.judge("openai:gpt-judge", {waiting: [1]})
    board = pairwise_board(Filters(), fingerprint())
    assert board["battles"] == 1
    assert "judged-alone" in board["options"]["benchmarks"]


def test_the_chart_plots_the_style_controlled_ratings_when_the_board_is_ordered_by_them():
    from evalhub.dashboards.pairwise import rating_chart

    rows = [
        {
            "model": "a",
            "rating": 1100.0,
            "low": 1050.0,
            "high": 1150.0,
            "style_rating": 990.0,
            "style_low": 950.0,
            "style_high": 1030.0,
        },
        {
            "model": "b",
            "rating": 900.0,
            "low": 850.0,
            "high": 950.0,
            "style_rating": None,
            "style_low": None,
            "style_high": None,
        },
    ]
    chart = rating_chart(rows, {}, style=True)  # type: ignore[arg-type]
    assert [row["mean"] for row in chart["rows"]] == [990.0]
    assert [row["mean"] for row in rating_chart(rows, {})["rows"]] == [1100.0, 900.0]  # type: ignore[arg-type]
