from __future__ import annotations

import pytest

from evalhub.adjudication.models import AdjudicationItem
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.debates.actions import do_create_run
from evalhub.debates.models import ONE_STAGE, DebateStatus
from tests.debates.conftest import demo  # noqa: F401  (fixture)


@pytest.fixture
def make_items(demo):  # noqa: F811
    """A run whose debates all went unresolved: one adjudication item each."""

    def make(
        required: int = 1,
        tie_policy: str = "another",
        category: str = "",
        name: str = "run",
        flow: str = ONE_STAGE,  # the queue's rules hold in either flow; test_blind_first.py tests the other
        **fields,
    ) -> list:
        run = do_create_run(
            name=name,
            benchmark=Benchmark.objects.get(slug="demo"),
            criterion=Criterion.objects.get(slug="helpfulness"),
            model_a=LanguageModel.objects.get(slug="demo-thorough"),
            model_b=LanguageModel.objects.get(slug="demo-terse"),
            agents=["heuristic"],
            category=category,
            human_verdicts=required,
            tie_policy=tie_policy,
            adjudication_flow=flow,
            **fields,
        )
        run.debates.update(status=DebateStatus.UNRESOLVED, rounds_used=3)
        return [
            AdjudicationItem.objects.create(debate=d, required_verdicts=required) for d in run.debates.order_by("id")
        ]

    return make
