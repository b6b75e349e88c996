"""Secrets are named, never carried (issue 78): a key typed into any spec a user can type, in any of the
shapes a spec could carry one, is refused with a clear error, and appears in no page, stored row, cache
entry or log line."""

from __future__ import annotations

import io
import logging

import pytest
from django.core.cache import cache
from django.core.management import CommandError, call_command

from evalhub.alignment.actions import do_create_judge
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.debates.actions import do_create_run
from evalhub.llm.registry import parse_spec
from evalhub.llm.types import UnknownProvider, redact
from tests.conftest import make_user
from tests.debates.conftest import demo  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

KEY = "sk-planted0key0never0shown0123456"
PLANTED = {
    "user and password in the server URL": f"openai-compatible:http://me:{KEY}@127.0.0.1:9/v1|m",
    "a key in the server URL's query": f"openai-compatible:http://127.0.0.1:9/v1?api_key={KEY}|m",
    "an api_key option": f"openai:gpt-4o-mini?api_key={KEY}",
    "a token option": f"anthropic:claude-sonnet-4-5?token={KEY}",
}


@pytest.mark.parametrize("shape", list(PLANTED))
def test_a_spec_that_carries_a_key_is_refused_without_echoing_it(shape):
    with pytest.raises(UnknownProvider) as refused:
        parse_spec(PLANTED[shape])
    assert KEY not in str(refused.value)
    assert "api_key_env" in str(refused.value), "the message says how to name the key instead"


@pytest.mark.parametrize(
    "spec",
    [
        {"provider": "openai", "model": "gpt-4o-mini", "api_key": KEY},
        {"provider": "openai", "model": "gpt-4o-mini", "default_headers": {"Authorization": f"Bearer {KEY}"}},
        {"provider": "openai-compatible", "model": "m", "base_url": f"http://u:{KEY}@127.0.0.1:9/v1"},
        {"provider": "openai", "model": "gpt-4o-mini", "api_key_env": KEY},  # a value where a name belongs
    ],
)
def test_a_dict_spec_that_carries_a_key_is_refused_too(spec):
    with pytest.raises(UnknownProvider) as refused:
        parse_spec(spec)
    assert KEY not in str(refused.value)


def test_a_spec_names_its_key_by_variable_and_the_client_reads_it(monkeypatch):
    from evalhub.llm.registry import get_chat_client

    monkeypatch.setenv("MY_GATEWAY_KEY", KEY)
    spec = "openai:gpt-4o-mini?api_key_env=MY_GATEWAY_KEY"
    assert str(parse_spec(spec)) == spec, "the spec as stored and shown: a variable's name"
    client = get_chat_client(spec)
    assert client._key() == KEY
    monkeypatch.delenv("MY_GATEWAY_KEY")
    with pytest.raises(Exception, match="set MY_GATEWAY_KEY"):
        client._key()


def test_the_one_redaction_function_masks_every_shape():
    for spec in PLANTED.values():
        assert KEY not in redact(spec)
    assert redact("http://127.0.0.1:8000/v1|m") == "http://127.0.0.1:8000/v1|m", "a plain URL is left alone"


@pytest.fixture
def doors(demo):  # noqa: F811 (fixture)
    from evalhub.catalog.models import Benchmark, Criterion, LanguageModel

    run = do_create_run(
        name="keyed",
        benchmark=Benchmark.objects.get(slug="demo"),
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=LanguageModel.objects.get(slug="demo-thorough"),
        model_b=LanguageModel.objects.get(slug="demo-terse"),
        agents=["heuristic"],
    )
    do_create_judge("keyed-judge", JudgeDefinition(spec="heuristic"))
    return {
        "run": run.pk,
        "/debates/new/": ["agents"],
        f"/debates/runs/{run.pk}/judges/": ["judge"],
        "/judge-versions/new/": ["spec"],
        "/judge-versions/keyed-judge/v1/rewrite/": ["proposer"],
        "/scoring/gem/new/": ["evaluation_lm", "preprocessing_lm", "validation_lm", "examiner_lm"],
        "/scoring/discernment/new/": ["judges", "perturbation_lm"],
        "/generation/new/": ["new_candidates", "hint_maker"],
    }


def stored_everywhere() -> str:
    """Every row of every table, as text, and every cache entry's key and value."""
    out = io.StringIO()
    call_command("dumpdata", stdout=out)
    text = out.getvalue()
    store = getattr(cache, "_cache", None)
    if hasattr(store, "get_client"):  # Redis: every key and its (pickled) value
        client = store.get_client(None, write=False)
        for key in client.scan_iter("*"):
            text += repr(key) + repr(client.get(key))
    elif isinstance(store, dict):  # the tests' in-process cache: its keys and pickled values
        text += "".join(repr(key) + repr(value) for key, value in store.items())
    return text


@pytest.mark.parametrize("shape", list(PLANTED))
def test_a_key_planted_in_every_spec_field_reaches_no_page_row_cache_or_log(client, doors, shape, caplog):
    caplog.set_level(logging.DEBUG)
    client.force_login(make_user("root", "admin", superuser=True))
    for url, fields in doors.items():
        if url == "run":
            continue
        for field in fields:
            data = {"name": "keyed-2", "spec": "heuristic"} | {field: PLANTED[shape]}
            response = client.post(url, data, follow=True)  # a refusal shown on the page it goes back to
            body = response.content.decode()
            assert KEY not in body, f"{url} {field} echoed the key"
            assert response.status_code in (200, 400), (url, field, response.status_code)
            assert "api_key_env" in body or "must not carry" in body or "user or password" in body, (url, field)
    pair = ["--benchmark", "demo", "--criterion", "helpfulness"]
    commands = {
        "run_debates": [*pair, "--model-a", "demo-thorough", "--model-b", "demo-terse", "--agent"],
        "judge_pairs": ["--run", str(doors["run"]), "--judge"],
        "judge_run": [
            "--benchmark",
            "demo",
            "--targets",
            "demo-terse",
            "--perturbations",
            "random_typos:minor",
            "--judge",
        ],
    }
    for command, arguments in commands.items():
        with pytest.raises((CommandError, SystemExit)) as refused:
            call_command(command, *arguments, PLANTED[shape], stdout=io.StringIO(), stderr=io.StringIO())
        assert KEY not in str(refused.value), command
    for url in ("/judge-versions/", "/leaderboards/", "/leaderboards/judges.csv", "/judges/", "/jobs/", "/debates/"):
        assert KEY not in client.get(url).content.decode(), url
    assert KEY not in stored_everywhere()
    assert KEY not in caplog.text
