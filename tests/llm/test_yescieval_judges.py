"""YESciEval's fine-tuned judges run in-process from the folder a deployment names (the tiny random model
stands in for the real weights), on the GPU queue like any local model, and say what to do when the folder
is missing or is an adapter evalhub cannot load; the names are the package's."""

from __future__ import annotations

import ast
import asyncio
import importlib.util
import json
from pathlib import Path

import pytest

from evalhub.core.yescieval.rubrics import messages
from evalhub.llm.providers.yescieval_judges import JUDGES, YesciEvalJudge
from evalhub.llm.registry import get_chat_client
from evalhub.llm.types import UnknownProvider
from evalhub.system.model_access import GPU_QUEUE, queue_for


@pytest.fixture
def tiny_folder(tmp_path_factory, tiny_model, tiny_tokenizer):
    folder = tmp_path_factory.mktemp("yescieval-ask")
    tiny_model.save_pretrained(folder)
    tiny_tokenizer.save_pretrained(folder)
    return folder


def test_the_judges_are_the_ones_the_package_names_with_its_own_model_ids():
    source = Path(importlib.util.find_spec("yescieval").submodule_search_locations[0]) / "judge" / "judges.py"
    defaults = {}
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.ClassDef) and node.name in ("AskAutoJudge", "BioASQAutoJudge"):
            method = next(n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "from_pretrained")
            defaults[node.name] = method.args.defaults[0].value
    assert defaults == {"AskAutoJudge": JUDGES["ask"][1], "BioASQAutoJudge": JUDGES["bioasq"][1]}


def test_a_judge_runs_the_packages_prompt_from_the_folder_it_is_given(tiny_folder, monkeypatch):
    monkeypatch.setenv("EVALHUB_YESCIEVAL_ASK_PATH", str(tiny_folder))
    client = get_chat_client("yescieval:ask")
    assert isinstance(client, YesciEvalJudge) and client.model == str(tiny_folder)
    asked = messages("relevancy", "Why?", ("Because.",), {"A paper": "Its abstract."})
    answer = asyncio.run(client.complete(asked, max_tokens=4))
    assert answer.text is not None  # the tiny model's words: no rating, read as invalid by the run
    assert queue_for(["yescieval:ask"]) == GPU_QUEUE


def test_a_missing_folder_says_which_setting_names_it_and_that_nothing_is_downloaded(monkeypatch):
    monkeypatch.delenv("EVALHUB_YESCIEVAL_BIOASQ_PATH", raising=False)
    with pytest.raises(UnknownProvider, match="EVALHUB_YESCIEVAL_BIOASQ_PATH.*downloads nothing"):
        get_chat_client("yescieval:bioasq")
    with pytest.raises(UnknownProvider, match="the package's judges are ask, bioasq"):
        get_chat_client("yescieval:other")


def test_an_adapter_names_what_it_needs(tmp_path, monkeypatch, tiny_folder):
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": "meta-llama/Llama-3.1-8B"}))
    monkeypatch.setenv("EVALHUB_YESCIEVAL_ASK_PATH", str(adapter))
    with pytest.raises(UnknownProvider, match="base model .* is not a local folder"):
        get_chat_client("yescieval:ask")
    (adapter / "adapter_config.json").write_text(json.dumps({"base_model_name_or_path": str(tiny_folder)}))
    if importlib.util.find_spec("peft") is None:
        with pytest.raises(UnknownProvider, match="install peft to load it, or merge it"):
            get_chat_client("yescieval:ask")
