"""Before imported scores had a key the database holds, two score imports at once could each store the
same score. The migration that adds the key keeps the last one written of each and nothing else."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

BEFORE = [("catalog", "0010_label_split")]


@pytest.mark.django_db(transaction=True)
def test_a_score_stored_twice_before_the_key_is_kept_once_the_latest():
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE)
    executor.loader.build_graph()
    old = executor.loader.project_state(list(executor.loader.applied_migrations)).apps
    benchmark = old.get_model("catalog", "Benchmark").objects.create(slug="b", name="B")
    prompt = old.get_model("catalog", "Prompt").objects.create(benchmark=benchmark, external_id="p", text="?")
    Model = old.get_model("catalog", "LanguageModel")
    author, rater = (Model.objects.create(slug=slug, display_name=slug) for slug in ("author", "rater"))
    response = old.get_model("catalog", "Response").objects.create(prompt=prompt, model=author, text="!")
    criterion = old.get_model("catalog", "Criterion").objects.create(slug="c", name="C", levels={})
    Judgment = old.get_model("catalog", "Judgment")
    scored = dict(criterion=criterion, judge_model=rater, response=response)
    first, second = (Judgment.objects.create(**scored, score=score) for score in (2, 4))
    other = Judgment.objects.create(criterion=criterion, judge_model=author, response=response, score=5)

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from evalhub.catalog.models import Judgment as Current

    assert sorted(Current.objects.values_list("pk", "score")) == [(second.pk, 4), (other.pk, 5)]
    assert first.pk < second.pk
