"""Database constraints of the catalog, on every configured database (PostgreSQL and SQLite on CI)."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connections, transaction

from evalhub.catalog.models import Benchmark, Criterion, Judgment, LanguageModel, Prompt, Response

ALIASES = sorted(settings.DATABASES)


@pytest.fixture(params=ALIASES)
def alias(request):
    return request.param


@pytest.fixture
def world(alias):
    objects = LanguageModel.objects.using(alias)
    model = objects.create(slug="m1", display_name="M1")
    other = objects.create(slug="m2", display_name="M2")
    benchmark = Benchmark.objects.using(alias).create(slug="b", name="B")
    prompt = Prompt.objects.using(alias).create(benchmark=benchmark, external_id="p1", text="?")
    first = Response.objects.using(alias).create(prompt=prompt, model=model, text="a")
    second = Response.objects.using(alias).create(prompt=prompt, model=other, text="b")
    criterion = Criterion.objects.using(alias).create(slug="c", name="C", levels={"1": "bad", "2": "good"})
    judge = objects.create(slug="judge", display_name="Judge")
    return {
        "alias": alias,
        "model": model,
        "prompt": prompt,
        "first": first,
        "second": second,
        "criterion": criterion,
        "judge": judge,
        "benchmark": benchmark,
    }


def rejected(alias: str, make) -> bool:
    try:
        with transaction.atomic(using=alias):
            make()
    except IntegrityError:
        return True
    return False


pytestmark = pytest.mark.django_db(databases="__all__")


def test_a_prompt_id_is_unique_within_a_benchmark(world):
    alias = world["alias"]
    assert rejected(
        alias, lambda: Prompt.objects.using(alias).create(benchmark=world["benchmark"], external_id="p1", text="again")
    )
    other = Benchmark.objects.using(alias).create(slug="b2", name="B2")
    Prompt.objects.using(alias).create(benchmark=other, external_id="p1", text="fine elsewhere")


def test_a_model_answers_a_prompt_once_per_variant(world):
    alias, prompt, model = world["alias"], world["prompt"], world["model"]
    assert rejected(alias, lambda: Response.objects.using(alias).create(prompt=prompt, model=model, text="dup"))
    Response.objects.using(alias).create(prompt=prompt, model=model, variant="sample-2", text="ok")


def test_a_derived_response_must_record_its_perturbation(world):
    alias, parent = world["alias"], world["first"]
    make = Response.objects.using(alias).create
    assert rejected(alias, lambda: make(prompt=parent.prompt, model=parent.model, text="x", parent=parent))
    assert rejected(alias, lambda: make(prompt=parent.prompt, model=parent.model, text="x", perturbation="typo"))
    derived = dict(
        prompt=parent.prompt,
        model=parent.model,
        text="x",
        parent=parent,
        perturbation="typo",
        perturbation_level="C",
        perturbation_severity="minor",
        perturbation_seed=1,
    )
    make(**derived)
    assert rejected(alias, lambda: make(**derived)), "the same perturbation with the same seed is a duplicate"
    make(**{**derived, "perturbation_seed": 2})


def test_a_perturbation_level_is_character_word_or_sentence(world):
    alias, parent = world["alias"], world["first"]
    assert rejected(
        alias,
        lambda: Response.objects.using(alias).create(
            prompt=parent.prompt, model=parent.model, text="x", parent=parent, perturbation="p", perturbation_level="X"
        ),
    )


def test_a_judgment_has_exactly_one_judge(world):
    alias = world["alias"]
    person = User.objects.db_manager(alias).create_user("judge-person")
    base = dict(criterion=world["criterion"], response=world["first"], score=3.0)
    make = Judgment.objects.using(alias).create
    assert rejected(alias, lambda: make(**base))
    assert rejected(alias, lambda: make(**base, judge_model=world["judge"], judge_user=person))
    make(**base, judge_model=world["judge"])
    make(**base, judge_user=person)


def test_a_judgment_is_either_a_score_or_a_pairwise_verdict(world):
    alias = world["alias"]
    base = dict(criterion=world["criterion"], judge_model=world["judge"], response=world["first"])
    make = Judgment.objects.using(alias).create
    assert rejected(alias, lambda: make(**base))  # neither
    assert rejected(alias, lambda: make(**base, score=2.0, verdict=1, response_2=world["second"]))
    assert rejected(alias, lambda: make(**base, verdict=1))  # a verdict needs a second response
    assert rejected(alias, lambda: make(**base, response_2=world["second"], verdict=3))
    assert rejected(alias, lambda: make(**{**base, "response_2": world["first"], "verdict": 1}))  # same response twice
    make(**base, score=4.0)
    make(**base, response_2=world["second"], verdict=0)


def test_a_human_author_has_no_provider(world):
    alias = world["alias"]
    assert rejected(
        alias,
        lambda: LanguageModel.objects.using(alias).create(slug="h", display_name="H", is_human=True, provider="openai"),
    )
    LanguageModel.objects.using(alias).create(slug="h", display_name="H", is_human=True)


def test_privileged_information_lists_every_non_empty_source_in_order(world):
    prompt = world["prompt"]
    prompt.rating_guidelines, prompt.privileged = "be strict", {"zeta": "z", "alpha": "a", "empty": ""}
    assert list(prompt.privileged_information().items()) == [
        ("rating_guidelines", "be strict"),
        ("alpha", "a"),
        ("zeta", "z"),
    ]


@pytest.mark.parametrize(
    ("levels", "problem"),
    [
        ({}, "non-empty"),
        ({"1": "a", "3": "c"}, "without gaps"),
        ({"one": "a"}, "not an integer"),
        ({"1": " "}, "needs"),
    ],
)
def test_criterion_levels_run_from_one_without_gaps(levels, problem):
    with pytest.raises(ValidationError, match=problem):
        Criterion(slug="x", name="X", levels=levels).clean()


def test_criterion_levels_are_normalised_to_string_keys_in_order():
    criterion = Criterion(slug="x", name="X", levels={2: "good ", "1": "bad"})
    criterion.clean()
    assert list(criterion.levels.items()) == [("1", "bad"), ("2", "good")]


@pytest.mark.parametrize("slug", ["m3\n", "", "with space", "semi;colon", "m\n3"])
def test_the_database_refuses_a_slug_no_url_can_carry(world, slug):
    from evalhub.generation.models import PromptTemplate
    from evalhub.surveys.models import Survey

    alias = world["alias"]
    makers = [
        lambda: LanguageModel.objects.using(alias).create(slug=slug, display_name="x"),
        lambda: Benchmark.objects.using(alias).create(slug=slug, name="x"),
        lambda: Criterion.objects.using(alias).create(slug=slug, name="x", levels={"1": "a"}),
        lambda: Survey.objects.using(alias).create(slug=slug, title="x"),
        lambda: PromptTemplate.objects.using(alias).create(slug=slug, name="x", user="{prompt}"),
    ]
    assert [rejected(alias, make) for make in makers] == [True] * len(makers)
    LanguageModel.objects.using(alias).create(slug="m-3_ok", display_name="fine")


def test_judgments_are_indexed_by_person_only_where_a_person_judged(world):
    """A model's verdicts (nearly every row: imports, judge runs) add no entry to the index people's
    judgments are found by; a lookup by person still uses it."""
    alias = world["alias"]
    connection = connections[alias]
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql LIKE '%(\"judge_user_id\")%'"
            )
            assert cursor.fetchall() == [
                (
                    "judgment_by_a_person",
                    'CREATE INDEX "judgment_by_a_person" ON "catalog_judgment" ("judge_user_id") '
                    'WHERE "judge_user_id" IS NOT NULL',
                )
            ]
            return
        cursor.execute(
            "SELECT indexrelid::regclass::text, pg_get_expr(indpred, indrelid) FROM pg_index "
            "WHERE indrelid = 'catalog_judgment'::regclass AND indkey::text = %s",
            [str(_attnum(cursor, "judge_user_id"))],
        )
        assert cursor.fetchall() == [("judgment_by_a_person", "(judge_user_id IS NOT NULL)")]
        cursor.execute("SET LOCAL enable_seqscan = off")
        person = User.objects.db_manager(alias).create_user("rater")
        sql, params = Judgment.objects.using(alias).filter(judge_user=person).values("pk").query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        assert "judgment_by_a_person" in " ".join(row[0] for row in cursor.fetchall())


def _attnum(cursor, column: str) -> int:
    cursor.execute(
        "SELECT attnum FROM pg_attribute WHERE attrelid = 'catalog_judgment'::regclass AND attname = %s", [column]
    )
    return cursor.fetchone()[0]
