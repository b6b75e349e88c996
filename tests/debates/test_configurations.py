"""Debate runs and single-judge runs start like every kind: a configuration checked once, stored as
the run's columns, read back for the job page (it showed `{"debate_run": 12}` before)."""

from __future__ import annotations

import pytest

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.debates.actions import RunRejected, do_create_judge_run, do_create_run, do_start_run
from evalhub.debates.config import DebateConfig, JudgeRunConfig
from evalhub.debates.models import DebateRun, JudgeRun

pytestmark = pytest.mark.django_db


def test_a_debate_runs_job_page_lists_the_configuration_it_was_made_with(make_run, login, viewer):
    run = do_start_run(make_run(rounds=2, privileged_sources=["reference_answer"]), enqueue=False)
    html = login(viewer).get(f"/jobs/{run.job_id}/").content.decode()
    for shown in ("scripted-0", "scripted-2", "demo-thorough", "demo-terse", "reference_answer", "unanimous"):
        assert shown in html
    assert "debate run" not in html
    assert DebateConfig.of_run(DebateRun.objects.get(pk=run.pk)).shown()["rounds"] == 2


def test_a_judge_runs_job_page_lists_the_configuration_it_was_made_with(make_run, login, viewer):
    reference = make_run()
    judge_run = do_create_judge_run(reference=reference, judge="heuristic", samples=3, temperature=0.7, enqueue=False)
    html = login(viewer).get(f"/jobs/{judge_run.job_id}/").content.decode()
    for shown in ("heuristic", "test run", "0.7", "check position"):
        assert shown in html, shown
    assert "judge run" not in html
    config = JudgeRunConfig.of_run(JudgeRun.objects.get(pk=judge_run.pk))
    assert (config.samples, config.temperature, config.reference) == (3, 0.7, reference)


def test_a_debate_run_is_made_from_its_configuration_and_read_back_equal(make_run):
    run = make_run(agents=["scripted-0"], seed=7)
    config = DebateConfig.of_run(run)
    assert (config.agents, config.seed, config.category) == (("scripted-0",), 7, "math")
    assert DebateConfig.of_run(DebateRun.objects.get(pk=run.pk)) == config


def debate_config(**changes) -> DebateConfig:
    fields = {
        "name": "run",
        "benchmark": Benchmark(slug="b", name="B"),
        "criterion": Criterion(slug="c", name="C"),
        "model_a": LanguageModel(pk=1, slug="a", display_name="A"),
        "model_b": LanguageModel(pk=2, slug="b", display_name="B"),
        "agents": ("heuristic",),
    }
    return DebateConfig(**{**fields, **changes})


def test_a_complete_debate_configuration_has_no_errors():
    assert debate_config().errors() == []


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"agents": ()}, "at least one agent"),
        ({"model_b": LanguageModel(pk=1, slug="a", display_name="A")}, "Model B must differ from model A"),
        ({"rounds": 0}, "at least one round"),
        ({"consensus_rule": "plurality"}, "The consensus rule is"),
        ({"history": "some"}, "Agents see"),
        ({"human_verdicts": 0}, "at least one person's verdict"),
        ({"tie_policy": "coin"}, "The tie policy is one of"),
        ({"max_tokens": 0}, "Max tokens must be at least 1"),
    ],
    ids=lambda value: str(value),
)
def test_each_incomplete_debate_configuration_is_refused_with_its_reason(changes, said):
    errors = debate_config(**changes).errors()
    assert any(said in error for error in errors), errors


def test_a_refused_debate_run_leaves_nothing_behind(demo):
    with pytest.raises(RunRejected, match="at least one agent"):
        do_create_run(
            name="no agents",
            benchmark=Benchmark.objects.get(slug="demo"),
            criterion=Criterion.objects.get(slug="helpfulness"),
            model_a=LanguageModel.objects.get(slug="demo-thorough"),
            model_b=LanguageModel.objects.get(slug="demo-terse"),
            agents=[],
        )
    assert not DebateRun.objects.exists()


def test_a_complete_judge_configuration_has_no_errors(make_run):
    reference = make_run()
    assert JudgeRunConfig(reference=reference, judge="heuristic").errors() == []
    assert JudgeRunConfig(reference=reference, judge="openai:gpt-4o-mini", probabilities=True).errors() == []


@pytest.mark.parametrize(
    ("changes", "said"),
    [
        ({"judge": " "}, "Name the judge's provider spec"),
        ({"criteria_variant": "inverted"}, "The criteria variant is"),
        ({"samples": 0}, "Samples per pair must be between 1 and 15"),
        ({"samples": 16}, "Samples per pair must be between 1 and 15"),
        ({"scale": "stars"}, "The scale is one of"),
        ({"max_tokens": 0}, "Max tokens must be at least 1"),
        ({"probabilities": True}, "gives no token log-probabilities"),  # the heuristic judge
        ({"judge": "openai:gpt-4o-mini", "probabilities": True, "scale": "graded"}, "1 / 2 / neither scale only"),
    ],
    ids=lambda value: str(value),
)
def test_each_incomplete_judge_configuration_is_refused_with_its_reason(make_run, changes, said):
    errors = JudgeRunConfig(**{"reference": make_run(), "judge": "heuristic", **changes}).errors()
    assert any(said in error for error in errors), errors


def test_a_judge_run_on_a_run_with_no_pairs_is_refused(make_run):
    empty = make_run()
    empty.debates.all().delete()
    with pytest.raises(RunRejected, match="has no pairs to judge"):
        do_create_judge_run(reference=empty, judge="heuristic", enqueue=False)
    assert not JudgeRun.objects.exists()
