"""Every page and export over imported labels asks the database in queries of bounded size.

The judge lab read every labelled pair's responses in one `filter(pk__in=…)`: on SQLite past its
variable limit (250,000 in Debian's build: 135,000 labelled pairs) `/judges/` answered 500 while the
boards answered; on PostgreSQL it built an 80,000-id statement in Python. Here SQLite is held to 999
variables and each bounded query to 200 values, so 1,200 labelled pairs are "more than the limit"; on
PostgreSQL the same test checks that no statement names more than 200 values.
"""

from __future__ import annotations

import pytest
from django.core.cache import cache

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.actions.scores import check_score_file, do_import_scores
from evalhub.judgelab.report import judge_key
from tests.query_sizes import PER_QUERY, longest_in_list

pytestmark = pytest.mark.django_db
PAIRS = 1_200
JUDGE = "gpt-judge"


def pair(n: int) -> str:
    """Prompt n's columns and its two responses: m1 against m2 on odd prompts, m2 against m3 on even."""
    a, b = ("m1", "m2") if n % 2 else ("m2", "m3")
    return f"q{n},Question {n}?,{'math' if n % 3 else 'writing'},{a},{b},A {n},B {n} longer"


def labels() -> bytes:
    """Each pair judged by a model; two in three by a person too, who calls one in seven a tie."""
    lines = ["prompt_id,prompt,category,model_a,model_b,response_a,response_b,judge,judge_kind,winner"]
    for n in range(PAIRS):
        verdict = "ab"[n % 5 % 2]
        lines.append(f"{pair(n)},{JUDGE},model,{verdict}")
        if n % 3:
            lines.append(f"{pair(n)},human-ann,human,{'tie' if n % 7 == 0 else verdict}")
    return "\n".join(lines).encode()


def scores() -> bytes:
    """Both responses of each pair scored by the model and by two people."""
    lines = ["prompt_id,prompt,category,model,response,rater,rater_kind,criterion,scale,score"]
    for n in range(PAIRS):
        prompt, question, category, model_a, model_b, text_a, text_b = pair(n).split(",")
        for model, text, score in ((model_a, text_a, n % 5), (model_b, text_b, (n + 2) % 5)):
            for rater, kind, shift in ((JUDGE, "model", 0), ("human-ann", "human", 0), ("human-ben", "human", n % 2)):
                row = [
                    prompt,
                    question,
                    category,
                    model,
                    text,
                    rater,
                    kind,
                    "coherence",
                    "1-5",
                    1 + (score + shift) % 5,
                ]
                lines.append(",".join(map(str, row)))
    return "\n".join(lines).encode()


@pytest.fixture
def imported():
    do_import_judgments(filename="l.csv", data=labels(), benchmark_slug="big", allow_new_models=True)
    data = scores()
    parsed = check_score_file("s.csv", data, allow_new_models=True)
    do_import_scores(parsed=parsed, filename="s.csv", data=data, benchmark_slug="big")


PAGES = [
    "/judges/",
    f"/judges/{judge_key(JUDGE)}/",
    f"/judges/{judge_key(JUDGE)}.csv",
    "/judges/report.csv",
    "/judges/report.json",
    "/judges/corrected-boards/?kind=model",
    "/judges/pointwise/",
    "/judges/pointwise.csv",
    "/leaderboards/",
    "/leaderboards/?source=imported_people&source=imported_judges",
    "/leaderboards/?source=imported_people&source=imported_judges&style=on",
    f"/leaderboards/baseline/?benchmark=big&judge={JUDGE}&baseline=m2",
    f"/leaderboards/baseline.csv?benchmark=big&judge={JUDGE}&baseline=m2",
    "/leaderboards/battles.jsonl",
    "/models/m1/",
    "/benchmarks/big/",
    "/benchmarks/big/export/judgments.csv",
]


@pytest.mark.parametrize("url", PAGES)
def test_a_page_over_more_labelled_pairs_than_a_query_may_name_answers_in_bounded_queries(
    imported, bounded, url, login, viewer
):
    cache.clear()
    response = login(viewer).get(url)
    assert response.status_code == 200, response.content[:500]
    if response.streaming:
        b"".join(response.streaming_content)
    assert longest_in_list(bounded) <= PER_QUERY


def test_imported_labels_read_a_batch_at_a_time_give_the_same_report(imported, monkeypatch):
    """Every row as a tuple at once held 2 GiB at ten million labels; read in batches (of 7 here), the
    report is the one read in one."""
    from evalhub.judgelab.report import compute
    from evalhub.reads import judged_pairs as observations
    from evalhub.system import numeric_reads

    whole = compute(observations.Scope()).as_json()
    monkeypatch.setattr(numeric_reads, "ROWS_PER_FETCH", 7)
    assert compute(observations.Scope()).as_json() == whole


def test_integer_ids_and_texts_go_to_the_database_as_one_parameter(db):
    """Django prepares and quotes every value of an `__in` list in Python (800,000 ids cost the judge lab
    9 of its 60 s at ten million labels; a million prompt ids 3 of a re-import's 53): integers and
    texts go as one array or JSON parameter instead."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evalhub.catalog.models import LanguageModel
    from evalhub.system.bounded_queries import where_in

    models = LanguageModel.objects.bulk_create(LanguageModel(slug=f"m{i}", display_name=f"M{i}") for i in range(30))
    wanted = [model.pk for model in models[::3]] + [10**9]  # one id of none
    with CaptureQueriesContext(connection) as queries:
        found = sorted(where_in(LanguageModel.objects.values_list("pk", flat=True), "pk", wanted))
        slugs = sorted(where_in(LanguageModel.objects.values_list("slug", flat=True), "slug", ["m3", "m4", "x"]))
    assert found == sorted(wanted[:-1]) and slugs == ["m3", "m4"]
    for query in queries:
        assert "IN (" not in query["sql"].replace("IN (SELECT", "")


ODD_TEXTS = ["", " ", "NULL", "null", 'say "hi"', "back\\slash", "a,b", "{x}", "[1]", "l\u00e9a", "\u4e2d", "tab\there"]


def test_texts_given_as_one_parameter_find_exactly_the_rows_named_however_they_are_spelled(db):
    """Quotes, backslashes, commas, braces and the word NULL must survive the array's text form
    (PostgreSQL) and the JSON list (SQLite) and match only themselves."""
    from evalhub.catalog.models import Benchmark, Prompt
    from evalhub.system.bounded_queries import where_in

    benchmark = Benchmark.objects.create(slug="odd", name="Odd")
    Prompt.objects.bulk_create(Prompt(benchmark=benchmark, external_id=text, text="?") for text in ODD_TEXTS)
    for wanted in (ODD_TEXTS, ODD_TEXTS[::2], ['"NULL"', "a", "b", "x"]):
        found = benchmark.prompts.filter(external_id__in_texts=wanted).values_list("external_id", flat=True)
        assert sorted(found) == sorted(set(wanted) & set(ODD_TEXTS))
        assert sorted(where_in(benchmark.prompts.values_list("external_id", flat=True), "external_id", wanted)) == (
            sorted(set(wanted) & set(ODD_TEXTS))
        )
    _, params = benchmark.prompts.filter(external_id__in_texts=ODD_TEXTS).query.sql_with_params()
    assert len(params) == 2  # the benchmark, and every text in one


def test_runs_on_a_benchmark_of_more_prompts_than_a_query_may_name_are_planned_in_bounded_queries(bounded):
    """Planning a GEM, DHP or generation run named every prompt of the benchmark in one IN list: on
    SQLite past its variable limit the form answered 500 before any job was made."""
    from types import SimpleNamespace

    from evalhub.catalog.models import Benchmark, LanguageModel, Prompt, Response
    from evalhub.generation.actions import do_ensure_builtin_templates, plan_generation
    from evalhub.scoring.discernment.runner import DiscernmentRunner
    from evalhub.scoring.gem.planning import check_preprocessing, planned_pairs

    benchmark = Benchmark.objects.create(slug="big", name="Big")
    a, b = (LanguageModel.objects.create(slug=slug, display_name=slug) for slug in ("a", "b"))
    prompts = Prompt.objects.bulk_create(
        Prompt(benchmark=benchmark, external_id=f"q{n}", text=f"Q{n}") for n in range(PAIRS)
    )
    Response.objects.bulk_create(Response(prompt=p, model=m, text=f"{m.slug} {p.pk}") for p in prompts for m in (a, b))
    ids = [p.pk for p in prompts]
    assert check_preprocessing(ids, {a.pk, b.pk}, ["gem"], "", use_imported=True)  # none is preprocessed
    assert sum(planned_pairs(ids, {a.pk}, {b.pk}, variants=1, strategies=0).values()) == PAIRS
    plan = plan_generation(benchmark, [a], do_ensure_builtin_templates()[0], tiers=[0, 1])
    assert (plan["tier_0_only"], plan["calls"]) == (PAIRS, PAIRS)  # no prompt has a reference to hint from
    config = SimpleNamespace(benchmark=benchmark, target_variant="", targets=[a], family="dhp")
    assert sum(DiscernmentRunner.plan(config, None, None).units.values()) == PAIRS
    assert longest_in_list(bounded) <= PER_QUERY
