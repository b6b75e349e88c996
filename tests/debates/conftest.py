from __future__ import annotations

import pytest

from evalhub.catalog.demo import do_load_demo
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.core.prompts import sections as ps
from evalhub.debates.actions import do_create_run
from evalhub.llm.base import ChatClient
from evalhub.llm.types import Completion, ProviderUnavailable


class ScriptedAgent(ChatClient):
    """A chat client whose answer is a function of the prompt; records every prompt it sees."""

    provider = "scripted"

    def __init__(self, decide, log: list) -> None:
        super().__init__("scripted")
        self.decide, self.log = decide, log

    async def _complete_once(self, messages, sampling):
        self.log.append(messages)
        text = self.decide(messages)
        if isinstance(text, Exception):
            raise text
        return Completion(
            text=text, provider="scripted", model="scripted", input_tokens=10, output_tokens=5, reasoning_tokens=2
        )


@pytest.fixture
def demo(db):
    do_load_demo()


@pytest.fixture
def make_run(demo):
    def make(**overrides):
        fields = {
            "name": "test run",
            "benchmark": Benchmark.objects.get(slug="demo"),
            "criterion": Criterion.objects.get(slug="helpfulness"),
            "model_a": LanguageModel.objects.get(slug="demo-thorough"),
            "model_b": LanguageModel.objects.get(slug="demo-terse"),
            "agents": ["scripted-0", "scripted-1", "scripted-2"],
            "category": "math",
        }
        return do_create_run(**{**fields, **overrides})

    return make


@pytest.fixture
def agents(monkeypatch):
    """Install decide(agent_index, messages) as the behaviour of every agent of every run."""
    log: list = []

    def install(decide):
        def factory(spec, meter=None):
            index = int(str(spec).rsplit("-", 1)[-1]) if str(spec).startswith("scripted") else 0
            return ScriptedAgent(lambda messages: decide(index, messages), log)

        monkeypatch.setattr("evalhub.debates.runner.chat_client", factory)
        monkeypatch.setattr("evalhub.debates.judging.chat_client", factory)
        return log

    return install


def sections_of(messages) -> dict[str, str]:
    return ps.parse_sections(messages[-1]["content"])


__all__ = ["ProviderUnavailable", "ScriptedAgent", "sections_of"]
