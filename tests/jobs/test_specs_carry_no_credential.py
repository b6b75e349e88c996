"""One rule for secrets at the one door every run starts through (`JobRunner.create`): a provider spec
that carries a credential is refused, for every kind and every field that holds a spec, whether its
provider is known here or a stand-in, so no form, command or API call can store one."""

from __future__ import annotations

import dataclasses

import pytest

from evalhub.jobs.config import RunConfig
from evalhub.jobs.kinds import KINDS
from evalhub.llm.registry import credential_carried

SECRET = "sk-proj-" + "Q9w8E7r6" * 4
CARRYING = [
    f"openai:gpt-4o-mini?api_key={SECRET}",
    f"openai-compatible:https://user:{SECRET}@llm.example.org/v1|m",
    f"scripted-0:{SECRET}",  # a stand-in provider (tests, embedders) is held to the same rule
]


@pytest.mark.parametrize("spec", CARRYING)
def test_a_spec_carrying_a_credential_is_named_without_the_credential(spec):
    why = credential_carried(spec)
    assert why and SECRET not in why


@pytest.mark.parametrize("spec", ["openai:gpt-4o-mini", "openai:o3?reasoning_effort=high", "scripted-0", "heuristic"])
def test_a_spec_that_names_its_credential_is_fine(spec):
    assert credential_carried(spec) == ""


# Fields whose names say they hold a provider spec: each kind must declare them in `spec_fields`.
SPEC_NAMES = ("judge", "judges", "agents", "proposer", "hint_maker")


def test_every_kind_declares_the_fields_that_hold_specs():
    for kind in KINDS:
        config = KINDS.config_of(kind)
        if config is None:
            continue
        names = {field.name for field in dataclasses.fields(config)}
        holding = {name for name in names if name in SPEC_NAMES or name.endswith("_lm")}
        assert holding == set(config.spec_fields), kind


@dataclasses.dataclass(frozen=True)
class Panel(RunConfig):
    spec_fields = ("judge", "agents")
    judge: str
    agents: tuple[str, ...] = ()


@pytest.mark.parametrize("spec", CARRYING)
def test_problems_refuses_a_carried_credential_in_one_spec_or_a_sequence(spec):
    assert Panel("heuristic").problems() == []
    assert len(Panel(spec).problems()) == 1 and SECRET not in Panel(spec).problems()[0]
    assert len(Panel("heuristic", ("heuristic", spec)).problems()) == 1


@pytest.mark.django_db
def test_a_debate_run_with_a_key_in_an_agents_spec_is_refused_and_nothing_is_made():
    from evalhub.catalog.demo import do_load_demo
    from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
    from evalhub.debates.config import DebateConfig
    from evalhub.debates.models import DebateRun
    from evalhub.jobs.models import Job

    do_load_demo()
    config = DebateConfig(
        name="keyed",
        benchmark=Benchmark.objects.get(slug="demo"),
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=LanguageModel.objects.get(slug="demo-thorough"),
        model_b=LanguageModel.objects.get(slug="demo-terse"),
        agents=("heuristic", CARRYING[0]),
    )
    runner = KINDS["debate"]
    with pytest.raises(runner.rejected) as refused:
        runner.create(config)
    assert SECRET not in str(refused.value) and "must not carry" in str(refused.value)
    assert not DebateRun.objects.exists() and not Job.objects.exists()
