"""Provider specs, lazy imports and helpful errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from evalhub.llm import get_chat_client, get_scorer, parse_spec
from evalhub.llm.registry import ProviderSpec
from evalhub.llm.types import UnknownProvider, redact

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("openai:gpt-4o-mini", ProviderSpec("openai", "gpt-4o-mini")),
        ("anthropic:claude-3-5-sonnet-latest", ProviderSpec("anthropic", "claude-3-5-sonnet-latest")),
        (
            "openai-compatible:http://127.0.0.1:8001/v1|meta-llama/Llama-3.1-8B-Instruct",
            ProviderSpec("openai-compatible", "meta-llama/Llama-3.1-8B-Instruct", "http://127.0.0.1:8001/v1"),
        ),
        (
            "anthropic:http://127.0.0.1:8002|claude-local",
            ProviderSpec("anthropic", "claude-local", "http://127.0.0.1:8002"),
        ),
        ("transformers:/models/llama", ProviderSpec("transformers", "/models/llama")),
        ("heuristic", ProviderSpec("heuristic", "balanced")),
        ("heuristic:reference", ProviderSpec("heuristic", "reference")),
        (
            {"provider": "openai", "model": "m", "max_concurrency": 2},
            ProviderSpec("openai", "m", None, {"max_concurrency": 2}),
        ),
    ],
)
def test_a_spec_names_provider_model_and_server(spec, parsed):
    assert parse_spec(spec) == parsed


def test_a_spec_prints_back_as_itself():
    spec = "openai-compatible:http://127.0.0.1:8001/v1|llama"
    assert str(parse_spec(spec)) == spec


def test_an_unknown_provider_suggests_the_nearest_name():
    with pytest.raises(UnknownProvider, match="unknown provider 'opneai'. Did you mean 'openai'"):
        parse_spec("opneai:gpt-4o")


@pytest.mark.parametrize(
    "spec", ["openai", "openai-compatible:gpt-4o", "openai-compatible:localhost:8000|m", "anthropic:http://h:1", ""]
)
def test_incomplete_specs_say_how_to_write_them(spec):
    with pytest.raises(UnknownProvider):
        parse_spec(spec)


def test_the_heuristic_provider_has_no_log_probabilities():
    with pytest.raises(UnknownProvider, match="unknown log-probability scorer 'heuristic'"):
        get_scorer("heuristic")


def test_an_unknown_heuristic_variant_is_refused():
    with pytest.raises(ValueError, match="choose from balanced, reference, detail, concise"):
        get_chat_client("heuristic:magic")


def test_importing_the_layer_loads_no_sdk_and_no_torch():
    code = (
        "import sys, evalhub.llm; from evalhub.llm import get_chat_client; get_chat_client('heuristic');"
        "print(sorted({'torch', 'transformers', 'openai', 'anthropic'} & set(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_credentials_are_redacted_from_error_texts():
    text = "Incorrect API key provided: sk-proj-abcdef123456. Header Bearer abc.def.ghi123 api_key=zzzzzzzzzz9"
    cleaned = redact(text)
    assert "abcdef123456" not in cleaned
    assert "abc.def.ghi123" not in cleaned
    assert "zzzzzzzzzz9" not in cleaned
    assert cleaned.count("***") == 3


def test_a_spec_s_limits_reach_the_client():
    client = get_chat_client(
        {
            "provider": "openai",
            "model": "m",
            "requests_per_minute": 500,
            "tokens_per_minute": 200000,
            "max_concurrency": 3,
        }
    )
    assert (client.requests_per_minute, client.tokens_per_minute, client.max_concurrency) == (500, 200000, 3)
