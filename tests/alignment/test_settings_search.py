"""Choice of settings, a job: each candidate asked about the split's train pairs only, scored by its
agreement with people there, the best made the next version (or none when the version's own won)."""

from __future__ import annotations

import json

import pytest

from evalhub.alignment.actions import VersionRejected, do_create_judge, do_search_settings
from evalhub.alignment.models import JudgeVersion, Method
from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.splits import do_make_split
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.debates.actions import do_create_run
from evalhub.jobs.models import JobStatus

pytestmark = pytest.mark.django_db(transaction=True)  # the job's chunks run as they commit
PROMPTS = 24


def right(number: int) -> str:
    return f"{number} times 3 is {number * 3}."


def wrong(number: int) -> str:  # longer: a judge that weighs length prefers it unless it reads the reference
    return f"Well, I believe that {number} times 3 comes to {number * 3 + 1}, or thereabouts, if I recall how it works."


def study(split: bool = True):
    """People always prefer the right answer; a reference answer says what it is."""
    rows, labels = [], []
    for number in range(PROMPTS):
        prompt = {
            "prompt_id": f"q{number}",
            "prompt": f"What is {number} times 3?",
            "category": "ab"[number % 2],
            "reference_answer": f"{number} times 3 is {number * 3}.",
        }
        rows += [{**prompt, "model": "right", "response": right(number)}]
        rows += [{"prompt_id": f"q{number}", "model": "wrong", "response": wrong(number)}]
        labels.append(
            {
                "prompt_id": f"q{number}",
                "model_a": "right",
                "model_b": "wrong",
                "response_a": right(number),
                "response_b": wrong(number),
                "judge": "human-ann",
                "winner": "a",
                "criterion": "helpfulness",
            }
        )
    data = "\n".join(json.dumps(row) for row in rows).encode()
    do_import_benchmark(filename="s.jsonl", data=data, benchmark_slug="sums", allow_new_models=True)
    do_import_judgments(filename="people.json", data=json.dumps(labels).encode(), benchmark_slug="sums")
    benchmark = Benchmark.objects.get(slug="sums")
    if split:
        do_make_split(benchmark, held_out_fraction=0.5)
    return do_create_run(
        name="right vs wrong",
        benchmark=benchmark,
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=LanguageModel.objects.get(slug="right"),
        model_b=LanguageModel.objects.get(slug="wrong"),
        agents=["heuristic"],
        rounds=1,
    )


CANDIDATES = [{"privileged_sources": []}, {"privileged_sources": ["reference_answer"]}]


def test_the_setting_that_agrees_most_on_train_pairs_becomes_the_next_version():
    reference = study()
    first = do_create_judge("plain", JudgeDefinition(spec="heuristic"))
    search = do_search_settings(first, reference, CANDIDATES)
    search.refresh_from_db()
    assert search.job.status == JobStatus.SUCCEEDED, search.job.message
    scores = {score.candidate: (score.agreed, score.judged) for score in search.scores.all()}
    assert scores == {0: (0, 12), 1: (12, 12)}, "12 train pairs each: the held-out 12 are never asked"
    made = search.made
    assert (made.number, made.method, made.parent) == (2, Method.SETTINGS, first)
    assert made.judge.privileged_sources == ("reference_answer",)
    assert made.split == search.split
    assert "candidate 2 (privileged_sources ['reference_answer']): 12/12 train pairs agreed" in made.note
    assert "v2 made with candidate 2" in search.job.message


def test_a_version_whose_own_settings_score_best_is_kept():
    reference = study()
    first = do_create_judge("informed", JudgeDefinition(spec="heuristic", privileged_sources=("reference_answer",)))
    search = do_search_settings(first, reference, CANDIDATES)
    search.refresh_from_db()
    assert search.made is None
    assert "informed v1's own settings scored best; no new version." in search.job.message
    assert JudgeVersion.objects.count() == 1


def test_a_search_needs_a_split_and_sound_candidates():
    reference = study(split=False)
    first = do_create_judge("plain", JudgeDefinition(spec="heuristic"))
    with pytest.raises(VersionRejected, match="no held-out split"):
        do_search_settings(first, reference, CANDIDATES)
    do_make_split(Benchmark.objects.get(slug="sums"), held_out_fraction=0.5)
    with pytest.raises(Exception, match="a candidate sets criteria_variant"):
        do_search_settings(first, reference, [{"temperature": 1}])


def test_an_admin_starts_the_grid_from_the_versions_page_and_a_viewer_cannot(login, admin_user, viewer):
    reference = study()
    do_create_judge("plain", JudgeDefinition(spec="heuristic"))
    assert login(viewer).post("/judge-versions/plain/v1/settings/", {"reference": reference.pk}).status_code == 403
    answer = login(admin_user).post("/judge-versions/plain/v1/settings/", {"reference": reference.pk})
    assert answer.status_code == 302
    assert answer["Location"].startswith("/jobs/")
    job_page = login(admin_user).get(answer["Location"]).content.decode()
    assert "Settings for plain v1 on sums&#x27;s train pairs" in job_page
    made = JudgeVersion.objects.get(name="plain", number=2)
    assert made.judge.privileged_sources == ("reference_answer",)  # the first of the grid to agree on all 12
    assert made.judge.samples == 1
    page = login(viewer).get("/judge-versions/plain/").content.decode()
    assert "settings chosen on train labels" in page
