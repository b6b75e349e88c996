"""The privileged-information paper's Figure 1 and Table 4 rebuilt from files and runs: people's
graded ratings imported (−3 … 3), graded judge runs (Figure 8's prompt) over two seeds with k samples
and both orders, and every cell of the table checked against scipy and `statistics` on numbers
this test planted itself."""

from __future__ import annotations

import csv
import io
import json
import re
import statistics
from collections import defaultdict

import numpy as np
import pytest
from scipy.stats import spearmanr

from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Benchmark, Criterion, Judgment, LanguageModel
from evalhub.core.prompts import sections as ps
from evalhub.debates.actions import do_create_judge_run, do_create_run
from evalhub.debates.models import JudgeVerdict
from evalhub.judgelab.graded import MODEL, PERSON, RUNS, graded_table
from evalhub.reads.judged_pairs import Scope
from tests.debates.conftest import sections_of

pytestmark = pytest.mark.django_db(transaction=True)

PROMPTS = 14
PEOPLE = ("human-ana", "human-ben", "human-cy", "human-dee")


def jsonl(rows) -> bytes:
    return "\n".join(json.dumps(row) for row in rows).encode()


def planted():
    """Each prompt's true preference for model `alpha` over `beta`, people's grades of it (−3 … 3, some
    rows shown with beta first), and an imported judge's grades."""
    rng = np.random.default_rng(5)
    truth = rng.normal(scale=1.5, size=PROMPTS)
    rows, people = [], defaultdict(dict)
    for index, value in enumerate(truth):
        for person in PEOPLE:
            if person == "human-dee" and index < 3:
                continue  # one person skipped three pairs
            grade = int(np.clip(round(value + rng.normal(scale=1.0)), -3, 3))
            people[person][index] = grade
            flipped = (index + len(person)) % 2 == 0
            rows.append(
                {
                    "prompt_id": f"p{index}",
                    "prompt": f"Question {index}?",
                    "model_a": "beta" if flipped else "alpha",
                    "model_b": "alpha" if flipped else "beta",
                    "response_a": f"beta says {index}" if flipped else f"alpha says {index}",
                    "response_b": f"alpha says {index}" if flipped else f"beta says {index}",
                    "judge": person,
                    "judge_kind": "human",
                    "grade": -grade if flipped else grade,
                }
            )
        judge_grade = float(np.clip(round(value + rng.normal(scale=2.0)), -3, 3))
        people.setdefault("_judge", {})[index] = judge_grade
        rows.append(
            {
                "prompt_id": f"p{index}",
                "model_a": "alpha",
                "model_b": "beta",
                "response_a": f"alpha says {index}",
                "response_b": f"beta says {index}",
                "judge": "imported-judge",
                "judge_kind": "model",
                "grade": judge_grade,
            }
        )
    imported_judge = people.pop("_judge")
    return truth, rows, dict(people), imported_judge


def alpha_beta_pairs(benchmark: str, agents=("heuristic",)):
    """A debate run of alpha against beta on the benchmark's prompts, under the default criterion."""
    return do_create_run(
        name=f"{benchmark} pairs",
        benchmark=Benchmark.objects.get(slug=benchmark),
        criterion=Criterion.objects.get(slug="overall"),
        model_a=LanguageModel.objects.get(slug="alpha"),
        model_b=LanguageModel.objects.get(slug="beta"),
        agents=list(agents),
    )


@pytest.fixture
def study():
    truth, rows, people, imported_judge = planted()
    do_import_judgments(filename="graded.jsonl", data=jsonl(rows), benchmark_slug="vibe", allow_new_models=True)
    return truth, people, imported_judge


def test_a_grade_is_stored_from_the_first_shown_side_and_its_sign_is_the_verdict(study):
    row = Judgment.objects.get(judge_model__slug="human-ana", response__prompt__external_id="p1")
    first_is_alpha = row.response.model.slug == "alpha"
    _, people, _ = study
    assert row.grade == (people["human-ana"][1] if first_is_alpha else -people["human-ana"][1])
    assert row.verdict == (1 if row.grade > 0 else 2 if row.grade < 0 else 0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"grade": 4}, "'grade' must be a number from -3 to 3"),
        ({"grade": "lots"}, "'grade' must be a number from -3 to 3"),
        ({"grade": 2, "winner": "b"}, "'grade' 2 and 'winner' 'b' disagree"),
        ({"grade": 0, "winner": "unreadable"}, "disagree"),
    ],
)
def test_a_bad_grade_is_refused_by_its_line_and_nothing_is_stored(db, change, message):
    row = {
        "prompt_id": "p",
        "prompt": "Q?",
        "model_a": "alpha",
        "model_b": "beta",
        "response_a": "a",
        "response_b": "b",
        "judge": "human-ana",
        "winner": "a",
    }
    with pytest.raises(ImportRejected) as refused:
        do_import_judgments(
            filename="g.jsonl",
            data=jsonl([row, {**{k: v for k, v in row.items() if k != "winner"}, "judge": "human-ben", **change}]),
            benchmark_slug="vibe",
            allow_new_models=True,
        )
    assert [(e.line, message in e.message) for e in refused.value.errors] == [(2, True)]
    assert Judgment.objects.count() == 0


def test_an_edited_grade_replaces_the_stored_one(study):
    _, rows, _, _ = planted()
    edited = [dict(r) for r in rows]
    target = next(r for r in edited if r["judge"] == "imported-judge" and r["prompt_id"] == "p0")
    target["grade"] = 3.0 if target["grade"] != 3.0 else 2.0
    summary = do_import_judgments(filename="g.jsonl", data=jsonl(edited), benchmark_slug="vibe")
    assert summary.counts["judgments_replaced"] == 1
    stored = Judgment.objects.get(judge_model__slug="imported-judge", response__prompt__external_id="p0")
    assert stored.grade == target["grade"]


def grade_answer(grade: int, alpha_first: bool) -> str:
    relation = {2: "A >> B", 1: "A > B", 0: "A = B", -1: "B > A", -2: "B >> A"}
    return f"Analysis.\nMy final verdict is: [[{relation[grade if alpha_first else -grade]}]]"


def test_figure_1_and_table_4_rebuilt_cell_by_cell(study, monkeypatch, login, viewer, outsider, client):
    truth, people, imported_judge = study
    benchmark = Benchmark.objects.get(slug="vibe")
    run = alpha_beta_pairs(benchmark.slug, agents=["scripted-0"])
    assert run.debates.count() == PROMPTS

    # The graded judge: per seed, a planted grade of alpha over beta per (prompt, order, sample).
    rng = np.random.default_rng(9)
    planned = {
        (seed, index, alpha_first, sample): int(np.clip(round(truth[index] + rng.normal(scale=s)), -2, 2))
        for seed, s in ((1, 1.0), (2, 1.5))
        for index in range(PROMPTS)
        for alpha_first in (True, False)
        for sample in range(2)
    }
    current = {"seed": 1, "asked": defaultdict(int)}
    prompts_seen = []

    class Graded:
        def __init__(self, *args, **kwargs):
            pass

        async def complete(self, messages, **options):
            from evalhub.llm.types import Completion

            prompts_seen.append(messages[-1]["content"])
            sections = sections_of(messages)
            index = int(re.search(r"Question (\d+)\?", sections[ps.QUESTION]).group(1))
            alpha_first = sections["Response A"].startswith("alpha")
            sample = options.get("repeat") or 0
            grade = planned[(current["seed"], index, alpha_first, sample)]
            return Completion(text=grade_answer(grade, alpha_first), provider="scripted", model="s")

        async def aclose(self):
            pass

    monkeypatch.setattr("evalhub.debates.judging.chat_client", Graded)
    for seed in (1, 2):
        current["seed"] = seed
        do_create_judge_run(
            reference=run,
            judge="scripted-0",
            scale="graded",
            samples=2,
            temperature=0.7,
            check_position=True,
            privileged_sources=["reference_answer"],
            seed=seed,
        )
    assert JudgeVerdict.objects.filter(grade__isnull=False).count() == 2 * PROMPTS * 2 * 2
    assert all("[[A >> B]]" in text and "Response B" in text for text in prompts_seen)

    table = graded_table(Scope())
    rows = {row.judge: row for row in table.rows}
    average = {i: statistics.fmean(g[i] for g in people.values() if i in g) for i in range(PROMPTS)}
    keys = list(range(PROMPTS))
    assert (table.pairs, table.people, table.ratings) == (PROMPTS, 4, sum(len(g) for g in people.values()))

    # Each person against the mean of the others.
    for person, grades in people.items():
        others = {i: statistics.fmean(g[i] for p, g in people.items() if p != person and i in g) for i in grades}
        expected = spearmanr([grades[i] for i in grades], [others[i] for i in grades])
        row = rows[person]
        assert row.kind == PERSON and row.correlation.n == len(grades)
        assert row.correlation.rho == pytest.approx(expected.statistic, abs=1e-12)
        assert row.correlation.p_value == pytest.approx(expected.pvalue, rel=1e-9)

    # The imported judge against all people.
    expected = spearmanr([imported_judge[i] for i in keys], [average[i] for i in keys])
    assert rows["imported-judge"].kind == MODEL
    assert rows["imported-judge"].correlation.rho == pytest.approx(expected.statistic, abs=1e-12)

    # The graded runs: one configuration over two seeds.
    runs = rows["scripted-0 + reference_answer"]
    assert runs.kind == RUNS and runs.seeds == (1, 2) and runs.grades == len(planned)
    per_seed = []
    for seed in (1, 2):
        mine = {i: statistics.fmean(planned[(seed, i, o, k)] for o in (True, False) for k in range(2)) for i in keys}
        per_seed.append(spearmanr([mine[i] for i in keys], [average[i] for i in keys]).statistic)
    pooled = {
        i: statistics.fmean(planned[(s, i, o, k)] for s in (1, 2) for o in (True, False) for k in range(2))
        for i in keys
    }
    expected = spearmanr([pooled[i] for i in keys], [average[i] for i in keys])
    assert runs.correlation.rho == pytest.approx(expected.statistic, abs=1e-12)
    assert runs.correlation.low is not None and runs.correlation.low <= runs.correlation.rho <= runs.correlation.high
    assert runs.spread.values == pytest.approx(tuple(per_seed), abs=1e-12)
    assert runs.spread.mean == pytest.approx(statistics.fmean(per_seed), abs=1e-12)
    assert runs.spread.sd == pytest.approx(statistics.stdev(per_seed), abs=1e-12)

    # The page and its CSV show the same figures.
    login(outsider)
    assert client.get("/judges/graded/").status_code == 403
    login(viewer)
    page = client.get("/judges/graded/")
    assert page.status_code == 200
    assert f"{expected.statistic:.3f}" in page.content.decode()
    chart = page.context["chart"]  # Figure 1: every row's rho on one axis, people as squares
    assert {r["label"] for r in chart["rows"]} == {row.judge for row in table.rows if row.correlation.rho is not None}
    assert sum(r["baseline"] for r in chart["rows"]) == 4 and "<svg" in page.content.decode()
    exported = list(csv.DictReader(io.StringIO(client.get("/judges/graded.csv").content.decode())))
    line = next(r for r in exported if r["judge"] == "scripted-0 + reference_answer")
    assert float(line["rho"]) == pytest.approx(expected.statistic, abs=1e-6)
    assert float(line["seed_sd"]) == pytest.approx(statistics.stdev(per_seed), abs=1e-6)
    assert client.get("/judges/graded/?benchmark=elsewhere").content.decode().count("No graded ratings") == 1


def test_the_offline_judge_answers_figure_8s_prompt_so_a_graded_run_needs_no_key(study):
    run = alpha_beta_pairs("vibe")
    judge_run = do_create_judge_run(reference=run, judge="heuristic", scale="graded", check_position=True)
    assert judge_run.verdicts.count() == 2 * PROMPTS
    assert not judge_run.verdicts.filter(grade__isnull=True).exists(), "every answer holds a verdict"
    for verdict in judge_run.verdicts.all():
        assert verdict.verdict == (1 if verdict.grade > 0 else 2 if verdict.grade < 0 else 0)
    assert any(row.kind == RUNS for row in graded_table(Scope()).rows)


def test_the_database_refuses_a_grade_whose_sign_is_not_its_verdict(study):
    from django.db import IntegrityError, transaction

    row = Judgment.objects.filter(grade__gt=0).first()
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.filter(pk=row.pk).update(verdict=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.filter(pk=row.pk).update(grade=3.5)


def test_graded_runs_stay_in_their_scope_and_are_grouped_over_seeds_only_on_the_same_pairs(study):
    """A run on another benchmark is no row under this one's filter, and a run of the same judge on
    other pairs is a row of its own: Table 4's spread is over seeds of one set of pairs."""
    vibe = alpha_beta_pairs("vibe")
    rows = [
        {
            "prompt_id": "o1",
            "prompt": "Other?",
            "model_a": "alpha",
            "model_b": "beta",
            "response_a": "x",
            "response_b": "y",
            "judge": "human-ana",
            "grade": 1,
        },
    ]
    do_import_judgments(filename="o.jsonl", data=jsonl(rows), benchmark_slug="other")
    other = alpha_beta_pairs("other")
    for reference, seed in ((vibe, 1), (other, 2)):
        do_create_judge_run(reference=reference, judge="heuristic", scale="graded", seed=seed)

    in_vibe = [row for row in graded_table(Scope(benchmark="vibe")).rows if row.kind == RUNS]
    assert [(row.on, row.seeds) for row in in_vibe] == [("vibe pairs", (1,))]
    everywhere = sorted((row.on, row.seeds) for row in graded_table(Scope()).rows if row.kind == RUNS)
    assert everywhere == [("other pairs", (2,)), ("vibe pairs", (1,))]


def test_a_person_slugged_people_is_counted_as_one_person(db):
    rows = [
        {
            "prompt_id": f"p{i}",
            "prompt": f"Q{i}?",
            "model_a": "alpha",
            "model_b": "beta",
            "response_a": f"a{i}",
            "response_b": f"b{i}",
            "judge": judge,
            "judge_kind": "human",
            "grade": (i % 5) - 2,
        }
        for i in range(4)
        for judge in ("people", "human-ben")
    ]
    do_import_judgments(filename="g.jsonl", data=jsonl(rows), benchmark_slug="vibe", allow_new_models=True)
    table = graded_table(Scope())
    assert (table.people, table.ratings) == (2, 8)
    assert {row.judge: row.grades for row in table.rows} == {"people": 4, "human-ben": 4}


def test_the_csv_writes_every_figure_in_full_precision_a_tiny_p_value_included():
    from evalhub.core.files.tables import to_text
    from evalhub.core.statistics.rank_correlation import RankCorrelation
    from evalhub.judgelab.graded import GradedRow, GradedTable, csv_rows

    row = GradedRow("judge-x", MODEL, (), RankCorrelation(40, 0.7123456789, 1.3e-7, 0.51, 0.84), 40)
    written = next(csv.DictReader(io.StringIO(to_text(csv_rows(GradedTable(rows=[row])), "csv"))))
    assert float(written["p_value"]) == 1.3e-7
    assert float(written["rho"]) == 0.7123456789
