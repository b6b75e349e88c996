"""DHP and YESciEval work offline end to end on the quickstart's demo: heuristic judges, no key,
no model — a D table and an optimism table come out, and reported rows are grouped by cause."""

from __future__ import annotations

import pytest

from evalhub.catalog.demo import do_load_demo
from evalhub.catalog.models import Benchmark, LanguageModel
from evalhub.jobs.models import Job, JobStatus
from evalhub.scoring.actions import do_create_discernment_run
from evalhub.scoring.discernment.config import DiscernmentConfig
from evalhub.worklog.issues import issue_groups
from evalhub.worklog.models import RowIssue

pytestmark = pytest.mark.django_db


@pytest.fixture
def demo():
    do_load_demo()
    return Benchmark.objects.get(slug="demo"), LanguageModel.objects.get(slug="demo-thorough")


def test_an_offline_dhp_run_with_heuristic_judges_gives_a_d_table(demo, django_capture_on_commit_callbacks):
    benchmark, target = demo
    with django_capture_on_commit_callbacks(execute=True):  # tasks run eagerly in tests
        run = do_create_discernment_run(
            DiscernmentConfig(
                benchmark=benchmark,
                family="dhp",
                task="dhp-question-answering",
                targets=[target],
                perturbations=[["random_typos", "major"], ["random_word_deletions", "major"], ["reordering", "major"]],
                metrics=["answer_quality"],
                judges=["heuristic", "heuristic:detail"],
                repeats=1,
            ),
        )
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.SUCCEEDED, job.message
    judges = job.result["dhp"]["judges"]
    assert set(judges) == {"heuristic", "heuristic:detail"}
    typos = judges["heuristic"]["perturbations"]["random_typos (major)"]
    assert typos["level"] == "C"
    assert 0 < typos["p"] < 1
    assert typos["D"] > 1, "typos lower the heuristic's score on nearly every demo answer"
    assert {"D_avg", "D_min", "D_avg_ew", "D_min_ew"} <= set(judges["heuristic"]["summary"])


def test_an_offline_yescieval_run_with_a_heuristic_judge_gives_the_optimism_table(
    demo, django_capture_on_commit_callbacks
):
    benchmark, target = demo
    with django_capture_on_commit_callbacks(execute=True):
        run = do_create_discernment_run(
            DiscernmentConfig(
                benchmark=benchmark,
                family="yescieval",
                task="yescieval",
                targets=[target],
                perturbations=[["relevancy_subtle", "subtle"], ["relevancy_extreme", "extreme"]],
                metrics=["relevancy"],
                judges=["heuristic"],
                repeats=1,
            ),
        )
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.SUCCEEDED, job.message
    relevancy = job.result["optimism"]["heuristic"]["relevancy"]
    assert set(relevancy) == {"subtle", "extreme"}
    extreme = relevancy["extreme"]
    assert extreme["n"] == 12
    assert extreme["mean_adversarial"] <= extreme["mean_benign"]


def test_reported_rows_are_grouped_by_cause_with_counts_and_examples(demo):
    benchmark, target = demo
    run = do_create_discernment_run(
        DiscernmentConfig(
            benchmark=benchmark,
            family="dhp",
            task="dhp-question-answering",
            targets=[target],
            perturbations=[["random_typos", "minor"]],
            metrics=["answer_quality"],
            judges=["heuristic"],
            repeats=1,
        ),
        enqueue=False,
    )
    RowIssue.objects.bulk_create(
        [RowIssue(job=run.job, stage="judging", message=f"heuristic: timed out after {n} s") for n in range(200)]
        + [RowIssue(job=run.job, stage="perturbation", message="random_typos (minor): unchanged")] * 2
    )
    groups, total = issue_groups(run.job)
    assert total == 202
    assert [(g.stage, g.count, len(g.examples)) for g in groups] == [("judging", 200, 3), ("perturbation", 2, 2)]
    assert groups[0].cause == "heuristic: timed out after 0 s"
