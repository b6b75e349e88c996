"""Few-shot from disagreements end to end, on planted cases: a judge that follows its examples (the
offline heuristic learns which length people prefer) gains on held-out pairs where people prefer the
shorter answer, with an interval that excludes 0; where people's choices follow nothing the judge can
see, the examples cannot help and the interval covers 0."""

from __future__ import annotations

import json

import pytest

from evalhub.alignment.actions import VersionRejected, do_create_judge, do_derive_version, do_run_version
from evalhub.alignment.comparisons import parent_comparisons
from evalhub.alignment.improvers.fewshot import do_improve_with_examples
from evalhub.alignment.models import Method
from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.splits import do_make_split
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, Prompt
from evalhub.catalog.queries import benchmark_split, read_split
from evalhub.core.alignment.paired import AGREEMENT, ORDER_CONSISTENCY, PICKS_ITSELF, PICKS_LONGER
from evalhub.core.alignment.split import HELD_OUT
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.debates.actions import do_create_run

pytestmark = pytest.mark.django_db(transaction=True)  # the judge runs' chunks run as they commit
PROMPTS = 40


def terse(number: int) -> str:
    return f"It is {number * 3}."


def verbose(number: int) -> str:
    return f"Well, if we take {number} and multiply it by three, which is what was asked, we get {number * 3} here."


def study(people_choose_terse) -> tuple:
    """A benchmark of PROMPTS prompts in two categories, each answered tersely and verbosely; split in
    half; then people's verdict on each pair: the terse one where `people_choose_terse(prompt number,
    held out)` says so, else the verbose one."""
    rows = []
    for number in range(PROMPTS):
        prompt = {"prompt_id": f"q{number}", "prompt": f"What is {number} times 3?", "category": "ab"[number % 2]}
        rows.append({**prompt, "model": "terse", "response": terse(number)})
        rows.append({"prompt_id": f"q{number}", "model": "verbose", "response": verbose(number)})
    data = "\n".join(json.dumps(row) for row in rows).encode()
    do_import_benchmark(filename="study.jsonl", data=data, benchmark_slug="study", allow_new_models=True)
    benchmark = Benchmark.objects.get(slug="study")
    do_make_split(benchmark, held_out_fraction=0.5, seed=0)
    parts = parts_of("study")
    labels = []
    for prompt in Prompt.objects.filter(benchmark=benchmark):
        number = int(prompt.external_id[1:])
        chosen = "terse" if people_choose_terse(number, parts[prompt.pk] == HELD_OUT) else "verbose"
        labels.append(
            {
                "prompt_id": prompt.external_id,
                "model_a": "terse",
                "model_b": "verbose",
                "response_a": terse(number),
                "response_b": verbose(number),
                "judge": "human-ann",
                "winner": "a" if chosen == "terse" else "b",
                "criterion": "helpfulness",
            }
        )
    do_import_judgments(filename="people.json", data=json.dumps(labels).encode(), benchmark_slug="study")
    reference = do_create_run(
        name="terse vs verbose",
        benchmark=benchmark,
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=LanguageModel.objects.get(slug="terse"),
        model_b=LanguageModel.objects.get(slug="verbose"),
        agents=["heuristic"],
        rounds=1,
    )
    return benchmark, reference


def improved_and_compared(reference):
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))  # prefers the longer answer
    do_run_version(first, reference)
    second = do_improve_with_examples(first, "study", "helpfulness", k=4, seed=0)
    do_run_version(second, reference)
    (comparison,) = parent_comparisons(second)
    return first, second, comparison


def test_examples_a_judge_follows_raise_its_held_out_agreement_with_an_interval_that_excludes_zero():
    _, reference = study(lambda number, held_out: True)  # people always prefer the terse answer
    first, second, comparison = improved_and_compared(reference)
    assert second.method == Method.FEW_SHOT
    assert second.split == Benchmark.objects.get(slug="study").label_split
    assert len(second.judge.examples) == 4
    assert {example.category for example in second.judge.examples} == {"a", "b"}
    train_questions = {p.text for p in Prompt.objects.filter(split_part__part="train")}
    assert {example.question for example in second.judge.examples} <= train_questions
    agreement = comparison.differences[AGREEMENT]
    assert comparison.held_out_only
    assert (agreement.pairs, agreement.prompts) == (20, 20), "the held-out pairs only"
    assert (agreement.before, agreement.after) == (0.0, 1.0)
    assert agreement.low > 0
    assert not agreement.no_change
    longer = comparison.differences[PICKS_LONGER]
    assert (longer.before, longer.after, longer.pairs) == (1.0, 0.0, 20)
    assert longer.high < 0, "the examples took the judge off the longer answer"
    consistency = comparison.differences[ORDER_CONSISTENCY]
    assert (consistency.before, consistency.after) == (1.0, 1.0), "both orders asked, the same verdict each time"
    assert consistency.no_change
    assert comparison.differences[PICKS_ITSELF].before is None, "the judge is no candidate: nothing counted"
    # Say the judge is the model that wrote the verbose answers: it preferred itself, and no longer does.
    LanguageModel.objects.filter(slug="verbose").update(provider="heuristic", model_id="detail")
    (comparison,) = parent_comparisons(second)
    itself = comparison.differences[PICKS_ITSELF]
    assert (itself.before, itself.after, itself.pairs) == (1.0, 0.0, 20)
    assert itself.high < 0


def test_examples_that_cannot_help_leave_an_interval_that_covers_zero():
    # People's choices follow nothing the judge sees: half of each part terse, half verbose.
    _, reference = study(lambda number, held_out: (number // 2) % 2 == 0)
    _, _, comparison = improved_and_compared(reference)
    agreement = comparison.differences[AGREEMENT]
    assert abs(agreement.difference) <= 0.2
    assert agreement.no_change


def test_a_version_that_never_judged_the_train_pairs_cannot_learn_from_them():
    _, reference = study(lambda number, held_out: True)
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    with pytest.raises(VersionRejected, match="run it on them first"):
        do_improve_with_examples(first, "study", "helpfulness")


def test_the_versions_page_and_export_show_the_held_out_comparison_and_the_examples(login, admin_user, viewer):
    _, reference = study(lambda number, held_out: True)
    client = login(admin_user)
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    assert client.post("/judge-versions/detail/v1/run/", {"reference": reference.pk}).status_code == 302
    form = {"benchmark": "study", "criterion": "helpfulness", "examples": 2, "seed": 0}
    assert client.post("/judge-versions/detail/v1/improve/", form).status_code == 302
    assert client.post("/judge-versions/detail/v2/run/", {"reference": reference.pk}).status_code == 302
    page = login(viewer).get("/judge-versions/detail/").content.decode()
    assert "Against detail v1 on terse vs verbose <small>held-out pairs only</small>" in page
    assert "improved on study's train labels" in page
    assert "+ What is" in page, "the examples added, by heading"
    exported = json.loads(client.get("/judge-versions/detail.json").content)
    (comparison,) = exported["versions"][1]["against_parent"]
    assert comparison["differences"]["agreement"]["difference"] == 1.0
    assert comparison["differences"]["agreement"]["no_change"] is False
    assert first.runs.count() == 1
    refused = login(admin_user).post("/judge-versions/detail/v2/improve/", {**form, "benchmark": "nowhere"})
    assert refused.status_code == 302
    assert first.children.count() == 1, "a refused improvement makes no version"


def test_few_shot_as_a_job_makes_the_version_or_fails_saying_why():
    from evalhub.alignment.actions import do_start_few_shot
    from evalhub.jobs.models import JobStatus

    _, reference = study(lambda number, held_out: True)
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    never_run = do_start_few_shot(first, "study", "helpfulness", examples=2)
    never_run.refresh_from_db()
    assert never_run.job.status == JobStatus.FAILED
    assert "run it on them first" in never_run.job.message
    assert never_run.made is None
    do_run_version(first, reference)
    run = do_start_few_shot(first, "study", "helpfulness", examples=2)
    run.refresh_from_db()
    assert run.job.status == JobStatus.SUCCEEDED, run.job.message
    assert (run.made.number, run.made.method, len(run.made.judge.examples)) == (2, Method.FEW_SHOT, 2)
    assert "detail v2 made: 2 worked example(s)" in run.job.message


def test_any_two_versions_compare_on_the_pairs_both_judged_in_either_order(login, viewer):
    _, reference = study(lambda number, held_out: True)
    improved_and_compared(reference)
    client = login(viewer)
    forward = client.get("/judge-versions/detail/compare/", {"before": 1, "after": 2, "format": "json"}).json()
    backward = client.get("/judge-versions/detail/compare/", {"before": 2, "after": 1, "format": "json"}).json()
    (there,) = forward["comparisons"]
    (back,) = backward["comparisons"]
    assert there["differences"]["agreement"]["difference"] == 1.0
    assert back["differences"]["agreement"]["difference"] == -1.0
    page = client.get("/judge-versions/detail/compare/", {"before": 1, "after": 2}).content.decode()
    assert "Against detail v1 on terse vs verbose" in page
    assert client.get("/judge-versions/detail/compare/", {"before": 1, "after": 9}).status_code == 404
    assert client.get("/judge-versions/detail/compare/", {"before": "x"}).status_code == 404
    assert 'action="/judge-versions/detail/compare/"' in client.get("/judge-versions/detail/").content.decode()


def test_the_versions_page_reads_each_benchmarks_verdicts_once_however_many_versions(monkeypatch, login, viewer):
    """Each comparison read the judge lab's observations of the whole benchmark again, on every view."""
    from evalhub.alignment import comparisons

    _, reference = study(lambda number, held_out: True)
    _, second, _ = improved_and_compared(reference)
    third = do_derive_version(second, JudgeDefinition(spec="heuristic:detail", instructions="Prefer the shorter."))
    do_run_version(third, reference)
    reads = []
    counted = comparisons.pair_verdicts

    def reading(*args, **kwargs):
        reads.append(args[:2])
        return counted(*args, **kwargs)

    monkeypatch.setattr(comparisons, "pair_verdicts", reading)
    page = login(viewer).get("/judge-versions/detail/").content.decode()
    assert page.count("Against detail v") == 2
    assert reads == [("study", "helpfulness")]


def test_each_versions_forms_name_it_and_a_second_run_on_the_same_pairs_is_asked_for_explicitly(login, admin_user):
    """v1 was run twice on the same pairs with no warning, from forms that looked alike for every version."""
    _, reference = study(lambda number, held_out: True)
    client = login(admin_user)
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    do_derive_version(first, JudgeDefinition(spec="heuristic:concise"), note="shorter")
    assert client.post("/judge-versions/detail/v1/run/", {"reference": reference.pk}).status_code == 302
    page = client.get("/judge-versions/detail/").content.decode()
    assert "Run v1 on these pairs" in page and "Run v2 on these pairs" in page
    assert 'id="v1-run-reference"' in page and 'id="v2-run-reference"' in page, "one id per version's field"
    assert f"v1 already ran on {reference.name}" in page
    repeat = client.post("/judge-versions/detail/v1/run/", {"reference": reference.pk}, follow=True)
    assert "detail v1 already ran on" in repeat.content.decode() and "Run again" in repeat.content.decode()
    assert first.runs.count() == 1, "refused, said why"
    again = client.post("/judge-versions/detail/v1/run/", {"reference": reference.pk, "again": "on"})
    assert again.status_code == 302 and first.runs.count() == 2


def parts_of(benchmark: str) -> dict[int, str]:
    """prompt id → its part in the benchmark's split ({} without one)."""
    split = benchmark_split(benchmark)
    return dict(read_split(split).parts) if split else {}
