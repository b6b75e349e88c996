from __future__ import annotations

import pytest

from evalhub.dashboards.gre_bench import gre_bench_board
from evalhub.dashboards.judges import judges_board
from evalhub.debates.models import DebateStatus
from evalhub.reads.caching import fingerprint
from evalhub.reads.spec_names import spec_models
from evalhub.scoring.models import DiscernmentRun, GemRun


def row_of(board, spec):
    return next(r for r in board["judges"] if r["judge"] == spec)


@pytest.fixture
def judged(arena):
    """Four math debates and one writing debate with references; judge X is right on 3 of 4 math
    pairs and on the writing one; with privileged information it is right on all five."""
    math = [arena.debate("alpha", "beta", verdict=v) for v in (1, 1, 2, 0)]
    writing = arena.debate("alpha", "beta", verdict=1, status=DebateStatus.ADJUDICATED, category="writing")
    waiting = arena.debate("alpha", "beta", verdict=None, status=DebateStatus.UNRESOLVED)
    plain = {math[0]: [1], math[1]: [1], math[2]: [2], math[3]: [1], writing: [1], waiting: [1]}
    arena.judge("openai:gpt-judge", plain, reversed_verdicts={math[0]: [1], math[1]: [2]})
    arena.judge("openai:gpt-judge", {d: [d.verdict] for d in [*math, writing]}, privileged=True)
    arena.judge("openai:gpt-judge", {math[0]: [2], math[1]: [2], math[2]: [2], math[3]: [None]}, variant="masked")
    arena.judge("heuristic:detail", {d: [1] for d in math})
    return math, writing


def test_agreement_pools_pairs_with_a_reference_and_counts_an_invalid_answer_as_a_miss(judged):
    board = judges_board(fingerprint())
    judge = row_of(board, "openai:gpt-judge")
    assert judge["agreement"]["plain"]["example"] == {"rate": 4 / 5, "hits": 4, "total": 5}
    assert judge["agreement"]["privileged"]["example"] == {"rate": 1.0, "hits": 5, "total": 5}
    # Most frequent reference verdict: 1 (three times); the judge's: 1 (four times) → the run agrees.
    assert judge["agreement"]["plain"]["system"] == {"agrees": 1, "runs": 1}
    assert judge["robustness"]["masked"] == {"rate": 1 / 4, "hits": 1, "total": 4}
    assert judge["robustness"]["original"]["rate"] == 4 / 5
    # Reversed order: math[0] said 1 shown reversed = 2 in the debate's order (a flip); math[1]
    # said 2 reversed = 1 (the same as in order).
    assert judge["flips"] == {"rate": 0.5, "hits": 1, "total": 2}
    assert judge["model"] == "judge-x"
    heuristic = row_of(board, "heuristic:detail")
    assert heuristic["agreement"]["plain"]["example"]["hits"] == 2
    assert heuristic["model"] is None
    assert heuristic["flips"] is None


def test_the_table_4_layout_has_a_row_per_criterion_and_scenario_and_an_overall_row(judged):
    table = judges_board(fingerprint())["table4"]
    assert table["judges"] == ["heuristic:detail", "openai:gpt-judge"]
    rows = {(r["criterion"], r["scenario"]): r["cells"] for r in table["rows"]}
    assert rows[("Helpfulness", "math")][1] == {"rate": 0.75, "hits": 3, "total": 4}
    assert rows[("Helpfulness", "writing")][0] is None  # the heuristic judge never saw it
    assert rows[("Average", "Overall")][1]["total"] == 5
    table5 = judges_board(fingerprint())["table5"]
    masked = [r for r in table5["rows"] if r["variant"] == "masked" and not r.get("overall")]
    assert [(r["scenario"], r["cells"][1]["rate"]) for r in masked] == [("math", 0.25)]


def test_usage_sums_calls_tokens_and_latency_per_judge(judged):
    usage = row_of(judges_board(fingerprint()), "openai:gpt-judge")["usage"]["judge"]
    calls = 6 + 2 + 5 + 4
    assert usage == {
        "calls": calls,
        "cached": 0,
        "input_tokens": 100 * calls,
        "output_tokens": 20 * calls,
        "latency_s": pytest.approx(0.5),
    }


def test_calls_count_every_call_a_judge_made_not_only_pairwise_ones(judged, arena, client, viewer, login):
    from evalhub.catalog.models import Prompt, Response
    from evalhub.scoring.models import JudgeScore

    job = arena.finished_job("discernment", {"family": "dhp"})
    run = DiscernmentRun.objects.create(
        job=job,
        benchmark=arena.benchmark,
        family="dhp",
        task="dhp-summarization",
        perturbations=[],
        metrics=[],
        judges=["openai:gpt-judge"],
    )
    prompt = Prompt.objects.create(benchmark=arena.benchmark, external_id="scored", text="q")
    text = Response.objects.create(prompt=prompt, model=arena.models["alpha"], text="a")
    for repeat, (score, reasked) in enumerate([(4, False), (3, True), (None, True)]):
        JudgeScore.objects.create(
            run=run,
            judge="openai:gpt-judge",
            response=text,
            metric="fluency",
            repeat=repeat,
            score=score,
            valid=score is not None,
            reasked=reasked,
        )
    pairwise = 6 + 2 + 5 + 4
    calls = row_of(judges_board(fingerprint()), "openai:gpt-judge")["calls"]
    assert calls == {"total": pairwise + 3 + 2, "judge": pairwise, "agent": 0, "scoring": 5}
    page = login(viewer).get("/leaderboards/").content.decode()
    assert f"{pairwise} pairwise · 5 scores" in page


def test_dhp_and_optimism_come_from_the_summaries_of_finished_jobs_latest_first(arena):
    def dhp_run(d_min: float) -> DiscernmentRun:
        job = arena.finished_job(
            "discernment",
            {
                "family": "dhp",
                "dhp": {
                    "judges": {
                        "openai:gpt-judge": {
                            "summary": {"D_avg": 2.0, "D_min": d_min, "D_avg_ew": 2.5, "D_min_ew": 1.5}
                        }
                    },
                    "intervals": {"openai:gpt-judge": {"D_avg_low": 1.5, "D_avg_high": 2.4}},
                },
                "weights_source": "survey v1",
            },
        )
        return DiscernmentRun.objects.create(
            job=job,
            benchmark=arena.benchmark,
            family="dhp",
            task="dhp-summarization",
            perturbations=[],
            metrics=[],
            judges=[],
        )

    dhp_run(0.4)
    latest = dhp_run(1.2)
    shift = {"mean_benign": 4.5, "mean_adversarial": 4.0, "drop": 0.5, "retention": 0.89, "optimistic_share": 0.8}
    yes_job = arena.finished_job(
        "discernment",
        {"family": "yescieval", "optimism": {"openai:gpt-judge": {"all": {"subtle": shift, "extreme": shift}}}},
    )
    DiscernmentRun.objects.create(
        job=yes_job,
        benchmark=arena.benchmark,
        family="yescieval",
        task="yescieval",
        perturbations=[],
        metrics=[],
        judges=[],
    )
    judge = row_of(judges_board(fingerprint()), "openai:gpt-judge")
    assert [(d["run"], d["D_min"], d["interval"]["D_avg_low"]) for d in judge["dhp"]] == [(latest.pk, 1.2, 1.5)]
    assert judge["optimism"][0]["extreme"]["optimistic_share"] == 0.8


def test_a_judge_spec_is_matched_to_its_model_by_provider_and_model_id(arena):
    assert spec_models({"openai:gpt-judge", "anthropic:gpt-judge", "heuristic", "not a spec"}) == {
        "openai:gpt-judge": "judge-x"
    }


def test_gre_bench_shows_the_latest_finished_run_per_benchmark_and_evaluation_lm(arena):
    def gem_run(mean: float, lm: str = "transformers:/m") -> GemRun:
        table = {
            "gem": [
                {"model": "alpha", "name": "ALPHA", "mean": mean, "low": mean - 0.1, "high": mean + 0.1, "n": 4},
                {"model": "humans", "name": "Humans", "baseline": True, "mean": 0.5, "low": 0.4, "high": 0.6, "n": 9},
            ],
            "gem-s-abstract": [{"model": "alpha", "name": "ALPHA", "mean": 0.2, "low": None, "high": None, "n": 1}],
        }
        job = arena.finished_job("gem", {"table": table, "interval": "90%: mean ± 1.645·SE"})
        return GemRun.objects.create(
            job=job,
            benchmark=arena.benchmark,
            variants=["gem", "gem-s-abstract"],
            evaluation_lm=lm,
            prompt_version="v1",
        )

    gem_run(0.1)
    newest = gem_run(0.9)
    other_lm = gem_run(0.3, lm="transformers:/other")
    boards = gre_bench_board(fingerprint())
    assert sorted(b["run"] for b in boards) == sorted([newest.pk, other_lm.pk])
    board = next(b for b in boards if b["run"] == newest.pk)
    assert board["older_runs"] == 1
    assert [v["key"] for v in board["variants"]] == ["gem", "gem-s-abstract"]
    assert [(r["model"], r["baseline"]) for r in board["rows"]] == [("alpha", False), ("humans", True)]
    assert board["rows"][0]["cells"]["gem"] == {"mean": 0.9, "low": pytest.approx(0.8), "high": 1.0, "n": 4}
    assert board["rows"][1]["cell_list"] == [{"mean": 0.5, "low": 0.4, "high": 0.6, "n": 9}, None]


def test_the_ablation_over_privileged_sources_gives_each_seeds_agreement_and_their_spread(arena, client, viewer, login):
    """The privileged-information paper's Table 4 layout: a judge run without and with a source, over seeds."""
    import statistics

    from evalhub.debates.models import JudgeRun

    debates = [arena.debate("alpha", "beta", verdict=v) for v in (1, 2, 1, 2, 1)]
    plan = {  # seed → picks, without and with the reference answer
        (0, False): (1, 1, 1, 1, 1),
        (1, False): (1, 2, 2, 1, 1),
        (2, False): (2, 2, 1, 1, 2),
        (0, True): (1, 2, 1, 2, 2),
        (1, True): (1, 2, 1, 2, 1),
    }
    for (seed, privileged), picks in plan.items():
        run = arena.judge(
            "openai:gpt-judge", {d: [p] for d, p in zip(debates, picks, strict=True)}, privileged=privileged
        )
        JudgeRun.objects.filter(pk=run.pk).update(seed=seed)
    arena.judge("heuristic", {d: [1] for d in debates})  # one run, one setting: nothing to compare

    rows = {(r["judge"], tuple(r["sources"])): r for r in judges_board(fingerprint())["ablation"]}
    assert set(rows) == {("openai:gpt-judge", ()), ("openai:gpt-judge", ("reference_answer",))}
    truth = [d.verdict for d in debates]
    for privileged, sources in ((False, ()), (True, ("reference_answer",))):
        agreements = [
            sum(p == t for p, t in zip(picks, truth, strict=True)) / 5
            for (seed, shown), picks in sorted(plan.items())
            if shown == privileged
        ]
        row = rows[("openai:gpt-judge", sources)]
        assert row["runs"] == len(agreements) and row["pairs"] == 5 * len(agreements)
        assert row["mean"] == pytest.approx(statistics.fmean(agreements))
        assert row["sd"] == pytest.approx(statistics.stdev(agreements))
        assert [a for _, a, _ in row["by_seed"]] == pytest.approx(agreements)
    login(viewer)
    assert "Privileged sources, run over seeds" in client.get("/leaderboards/").content.decode()
