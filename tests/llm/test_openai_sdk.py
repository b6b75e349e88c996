"""OpenAI's chat completions through the official SDK: reasoning models called as OpenAI defines them,
proxies from the environment, Azure OpenAI, and answers that hold no answer failing with their reason.
Against a loopback server that follows OpenAI's documented rules (evalhub.llm.testing)."""

from __future__ import annotations

import time

import pytest

from evalhub.llm.cache import ResponseCache
from evalhub.llm.registry import CHAT_PROVIDERS, parse_spec
from evalhub.llm.retry import RetryPolicy
from evalhub.llm.testing import REASONING_TOKENS, SUMMARY_TEXT, FakeLLMServer, ForwardingProxy, Unusable
from evalhub.llm.types import AuthenticationFailed, ProviderUnavailable, RequestRejected, UnknownProvider

# Both HTTP clients under the SDK, and every client closed in its test's loop, as for the other clients.
from tests.llm.test_chat_clients import (  # noqa: F401 (autouse fixtures)
    answer,
    assert_cached_only_per_repeat,
    close_clients,
    http_client,
)
from tests.llm.test_chat_clients import get_chat_client as make_chat_client

FAST = RetryPolicy(max_attempts=2, base_delay_s=0.01, max_delay_s=0.02)
MESSAGES = [{"role": "user", "content": "Which is better, A or B?"}]


def client_for(spec, server, **options):
    return make_chat_client(spec, base_url=f"{server.url}/v1", api_key="test-key", retry=FAST, **options)


@pytest.fixture
def server():
    with FakeLLMServer(reply=lambda messages: "[[A]]") as fake:
        yield fake


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_reasoning_model_gets_max_completion_tokens_no_temperature_and_its_reasoning_counted(server, streamed):
    client = client_for("openai:gpt-5-mini?reasoning_effort=low", server)
    if streamed:
        stream = client.stream(MESSAGES, temperature=0.0, max_tokens=300)
        text = "".join([chunk async for chunk in stream])
        completion = stream.completion
    else:
        completion = await client.complete(MESSAGES, temperature=0.0, max_tokens=300)
        text = completion.text
    assert text == "[[A]]"
    body = server.state.requests[-1]["body"]
    assert body["max_completion_tokens"] == 300 and body["reasoning_effort"] == "low"
    assert "max_tokens" not in body and "temperature" not in body
    assert completion.reasoning_tokens == REASONING_TOKENS
    assert client.meter.usage().reasoning_tokens == REASONING_TOKENS


async def test_the_test_server_refuses_a_reasoning_model_what_openai_refuses_it(server):
    """The rules the test above is held to: max_tokens and a temperature other than 1 are refused by
    name, and the refusal names what to set (not 'request rejected')."""
    plain = client_for({"provider": "openai", "model": "o3-mini", "reasoning": False}, server)
    with pytest.raises(RequestRejected, match=r"does not take 'max_tokens'.*reasoning=true"):
        await plain.complete(MESSAGES)
    assert server.request_count == 1, "not retried"


def test_the_reasoning_efforts_are_the_sdks_own_and_an_unknown_one_is_refused_at_the_spec():
    from typing import get_args

    from openai.types.shared import ReasoningEffort

    from evalhub.llm.option_values import reasoning_efforts

    offered = {
        value for kind in get_args(ReasoningEffort) for value in (get_args(kind) or (kind,)) if isinstance(value, str)
    }
    assert set(reasoning_efforts()) == offered and {"none", "xhigh"} <= offered
    for effort in ("none", "xhigh", "minimal"):
        assert parse_spec(f"openai:gpt-5.2?reasoning_effort={effort}").options["reasoning_effort"] == effort
    with pytest.raises(UnknownProvider, match=r"reasoning_effort is one of none, .*not 'extreme'"):
        parse_spec("openai:gpt-5?reasoning_effort=extreme")


@pytest.mark.parametrize(
    ("model", "reasoning"),
    [("gpt-6", True), ("gpt-6.1-mini", True), ("gpt-5.2", True), ("o5-mini", True), ("gpt-10", True)]
    + [("gpt-6-chat-latest", False), ("gpt-5-chat-latest", False), ("gpt-4o", False), ("gpt-4.1", False)]
    + [("gpt-4.5-preview", False), ("omni-moderation-latest", False)],
)
def test_reasoning_models_are_told_by_family_so_a_new_family_is_one_too(model, reasoning):
    from evalhub.llm.model_names import is_reasoning_model

    assert is_reasoning_model(model) is reasoning


async def test_a_model_that_refuses_one_reasoning_effort_is_told_to_choose_another_not_to_drop_it(server):
    client = client_for("openai:o3?reasoning_effort=minimal", server)
    with pytest.raises(RequestRejected, match=r"does not take reasoning effort 'minimal'.*one it takes") as refused:
        await client.complete(MESSAGES)
    assert "drop ?reasoning_effort" not in str(refused.value) and server.request_count == 1
    await client_for("openai:gpt-6?reasoning_effort=xhigh", server).complete(MESSAGES)
    body = server.state.requests[-1]["body"]
    assert body["reasoning_effort"] == "xhigh" and "max_completion_tokens" in body, "gpt-6 called as a reasoning model"


async def test_a_compatible_servers_model_is_a_reasoning_model_only_when_its_spec_says_so(server):
    await client_for(f"openai-compatible:{server.url}/v1|o3-like-local?reasoning=true", server).complete(MESSAGES)
    assert "max_completion_tokens" in server.state.requests[-1]["body"]
    server.state.reasoning_rules = False  # a local server that takes max_tokens from every model
    await client_for(f"openai-compatible:{server.url}/v1|gpt-5-local", server).complete(MESSAGES)
    body = server.state.requests[-1]["body"]
    assert "max_tokens" in body and "temperature" in body, "a local model named like OpenAI's is not one of theirs"


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize(
    ("kind", "reason", "asked"),
    [
        ("no-choices", "held no choice", 2),  # a server's hiccup may pass: asked again, then failed
        ("refusal", "the model refused: I can't help with that.", 1),
        ("content-filter", "content filter stopped the answer", 1),
        ("empty", r"answered nothing \(finish_reason 'stop'\)", 1),  # it was stored as an empty verdict
    ],
)
async def test_an_answer_that_holds_no_answer_is_a_failed_call_with_its_reason(server, kind, reason, asked, streamed):
    await assert_fails_with_its_reason(client_for("openai:gpt-4o-mini", server), server, kind, reason, asked, streamed)


async def assert_fails_with_its_reason(client, server, kind, reason, asked, streamed):
    """Twice an answer of `kind`: the call fails with `reason`, after `asked` requests."""
    server.fail_next(Unusable(kind), Unusable(kind))
    with pytest.raises((RequestRejected, ProviderUnavailable), match=reason):
        await answer(client, MESSAGES, streamed)
    assert server.request_count == asked


async def test_an_error_the_server_streams_in_place_of_the_answer_fails_the_call_with_it(server):
    server.fail_next(Unusable("stream-error"))
    with pytest.raises(RequestRejected, match="error in stream: .*server had an error"):
        await answer(client_for("openai:gpt-4o-mini", server), MESSAGES, True)
    assert server.request_count == 1


async def test_calls_go_through_a_proxy_named_only_in_the_environment(server, monkeypatch):
    with ForwardingProxy() as proxy:
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        client = client_for("openai:gpt-4o-mini", server)
        assert (await client.complete(MESSAGES)).text == "[[A]]"
        assert "".join([chunk async for chunk in client.stream(MESSAGES)]) == "[[A]]"
    assert proxy.seen == [f"{server.url}/v1/chat/completions"] * 2


async def test_azure_openai_calls_its_deployment_with_its_api_version_and_key(server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "test-key")
    monkeypatch.setenv("OPENAI_API_VERSION", "2024-10-21")
    client = make_chat_client(f"azure:{server.url}|my-gpt4o", retry=FAST)
    assert (await client.complete(MESSAGES)).text == "[[A]]"
    request = server.state.requests[-1]
    assert request["path"] == "/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21"
    assert {k.lower(): v for k, v in request["headers"].items()}["api-key"] == "test-key"
    assert "".join([chunk async for chunk in client.stream(MESSAGES)]) == "[[A]]"  # streamed, the same path
    assert server.state.requests[-1]["path"] == request["path"]
    monkeypatch.delenv("OPENAI_API_VERSION")
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    unset = make_chat_client("azure:other", retry=FAST)
    with pytest.raises(RequestRejected, match="AZURE_OPENAI_ENDPOINT and OPENAI_API_VERSION"):
        await unset.complete(MESSAGES)


RESPONSES_ONLY = ["o3-pro", "o1-pro", "gpt-5-pro", "gpt-5.2-pro", "gpt-5.5-pro", "gpt-5-codex", "gpt-5.1-codex-mini"]


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize("model", [*RESPONSES_ONLY, "codex-mini-latest"])
async def test_a_model_only_the_responses_api_serves_is_called_there_as_a_reasoning_model(server, model, streamed):
    """They went to chat completions and came back as OpenAI's 404 (the test server answers them so too)."""
    client = client_for(f"openai:{model}?reasoning_effort=high", server)
    completion = await answer_with_completion(client, streamed, max_tokens=300)
    assert completion.text == "[[A]]"
    request = server.state.requests[-1]
    assert request["path"] == "/v1/responses"
    assert request["body"] == {
        "model": model,
        "input": MESSAGES,
        "max_output_tokens": 300,
        "store": False,
        "reasoning": {"effort": "high"},
        **({"stream": True} if streamed else {}),
    }
    assert completion.reasoning_tokens == REASONING_TOKENS and completion.input_tokens == len(
        MESSAGES[0]["content"].split()
    )
    assert client.meter.usage().reasoning_tokens == REASONING_TOKENS


async def answer_with_completion(client, streamed, messages=MESSAGES, **sampling):
    if streamed:
        stream = client.stream(messages, **sampling)
        text = "".join([chunk async for chunk in stream])
        assert text == stream.completion.text, "what was shown is the answer"
        return stream.completion
    return await client.complete(messages, **sampling)


async def test_the_test_server_answers_a_responses_only_model_on_chat_completions_as_openai_does(server):
    forced = client_for("openai:gpt-5-pro?api=chat", server)  # the spec's choice holds: it goes there
    with pytest.raises(RequestRejected, match=r"HTTP 404.*only supported in v1/responses"):
        await forced.complete(MESSAGES)
    assert server.state.requests[-1]["path"] == "/v1/chat/completions"


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_reasoning_summary_is_kept_apart_from_the_answer(server, streamed):
    client = client_for("openai:o3?api=responses&reasoning_summary=auto", server)
    completion = await answer_with_completion(client, streamed)
    assert completion.text == "[[A]]", "the summary is never read as the verdict"
    assert completion.reasoning_summary == SUMMARY_TEXT
    assert server.state.requests[-1]["body"]["reasoning"] == {"summary": "auto"}


async def test_a_chat_model_asked_through_the_responses_api_keeps_its_temperature(server):
    await client_for("openai:gpt-4o?api=responses", server).complete(MESSAGES, temperature=0.3, seed=4)
    body = server.state.requests[-1]["body"]
    assert body["temperature"] == 0.3 and "reasoning" not in body and "seed" not in body  # the API has no seed
    with pytest.raises(RequestRejected, match="no log-probabilities from the Responses API"):
        await client_for("openai:gpt-4o?api=responses", server).complete(MESSAGES, top_logprobs=3)


@pytest.mark.parametrize("streamed", [False, True])
@pytest.mark.parametrize(
    ("kind", "reason", "asked"),
    [
        ("no-choices", "held no message", 2),
        ("refusal", "the model refused: I can't help with that.", 1),
        ("content-filter", "content filter stopped the answer", 1),
        ("empty", r"answered nothing \(finish_reason 'stop'\)", 1),
        ("failed", r"the response failed \(server_error\): The model failed", 2),
        ("empty-body", "answered 200 with an empty", 2),
    ],
)
async def test_a_response_that_holds_no_answer_is_a_failed_call_with_its_reason(server, kind, reason, asked, streamed):
    client = client_for("openai:gpt-5-pro", server)
    await assert_fails_with_its_reason(client, server, kind, reason, asked, streamed)
    if kind != "empty-body":  # every answer that said its usage is counted: billed, though unusable
        assert client.meter.usage().reasoning_tokens == asked * REASONING_TOKENS


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_response_out_of_tokens_says_so(streamed):
    """max_output_tokens counts the reasoning: a reasoning model may spend them all before answering."""
    with FakeLLMServer(reply=lambda messages: "a long answer that runs on", honour_max_tokens=True) as fake:
        with pytest.raises(RequestRejected, match="spent every token it was allowed on reasoning"):
            await answer_with_completion(client_for("openai:gpt-5-pro", fake), streamed, max_tokens=REASONING_TOKENS)
        completion = await answer_with_completion(
            client_for("openai:gpt-4o?api=responses", fake), streamed, max_tokens=2
        )
        assert (completion.text, completion.finish_reason) == ("a long", "length")


async def test_a_model_that_refuses_an_effort_through_the_responses_api_is_told_to_choose_another(server):
    with pytest.raises(RequestRejected, match=r"does not take reasoning effort 'minimal'.*one it takes"):
        await client_for("openai:o3-pro?reasoning_effort=minimal", server).complete(MESSAGES)


@pytest.mark.parametrize("model", ["computer-use-preview", "o3-deep-research", "o4-mini-deep-research-2025-06-26"])
async def test_a_model_that_answers_only_with_tools_is_refused_before_any_request(server, model):
    with pytest.raises(RequestRejected, match="only with tools evalhub does not give a judge"):
        await client_for(f"openai:{model}", server).complete(MESSAGES)
    assert server.request_count == 0


async def test_azure_calls_a_deployment_through_the_responses_api(server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "test-key")
    client = make_chat_client(f"azure:{server.url}|my-pro?api=responses&api_version=2025-04-01-preview", retry=FAST)
    assert (await client.complete(MESSAGES)).text == "[[A]]"
    request = server.state.requests[-1]
    assert request["path"].split("?")[0].endswith("/responses") and "api-version=2025-04-01-preview" in request["path"]
    assert request["body"]["model"] == "my-pro"


def test_spec_options_for_the_responses_api_are_checked_at_the_form():
    assert parse_spec("openai:o3?api=responses&reasoning_summary=detailed").options["api"] == "responses"
    for bad, said in (
        ("openai:o3?api=assistants", "api is chat or responses"),
        ("openai:o3?api=responses&reasoning_summary=long", "reasoning_summary is one of auto, concise, detailed"),
        ("openai:o3?reasoning_summary=auto", "only from the Responses API"),
        ("anthropic:claude?api=responses", "anthropic takes no api option"),
    ):
        with pytest.raises(UnknownProvider, match=said):
            parse_spec(bad)


@pytest.mark.parametrize("model", ["gpt-5", "gpt-5.2", "o3", "o4-mini", "gpt-4o", "gpt-5-chat-latest", "gpt-6-mini"])
def test_a_chat_completions_model_is_not_taken_for_a_responses_only_one(model):
    from evalhub.llm.capabilities import gives_logprobs
    from evalhub.llm.model_names import api_for, is_responses_only

    assert not is_responses_only(model) and api_for("openai", model, {}) == "chat"
    assert all(api_for("openai", only, {}) == "responses" for only in RESPONSES_ONLY)
    assert api_for("openai-compatible", "gpt-5-pro", {}) == "chat", "a local server's names are its own"
    assert not gives_logprobs("openai:gpt-4o?api=responses") and gives_logprobs("openai:gpt-4o")


def test_spec_options_are_checked_and_written_back():
    assert str(parse_spec("openai:o3?reasoning_effort=high")) == "openai:o3?reasoning_effort=high"
    assert parse_spec("azure:dep?api_version=2024-10-21").options == {"api_version": "2024-10-21"}
    for bad, said in (
        ("openai:o3?effort=high", "openai takes no effort option"),  # Claude's, not OpenAI's
        ("openai:o3?effrot=high", "unknown option 'effrot'"),
        ("openai:o3?reasoning=maybe", "true or false"),
        ("anthropic:claude?reasoning=true", "anthropic takes no reasoning option"),
    ):
        with pytest.raises(UnknownProvider, match=said):
            parse_spec(bad)
    with pytest.raises(UnknownProvider, match="reasoning_effort is one of"):  # at the form, before any call
        make_chat_client("openai:o3?reasoning_effort=extreme")


async def test_token_log_probabilities_come_back_where_asked_and_are_refused_where_no_model_gives_them(server):
    client = client_for("openai:gpt-4o-mini", server)
    answer = await client.complete(MESSAGES, top_logprobs=5)
    assert server.state.requests[-1]["body"]["logprobs"] is True
    assert server.state.requests[-1]["body"]["top_logprobs"] == 5
    last_token, logprob, alternatives = answer.token_logprobs[-1]
    assert last_token == "[[A]]" and logprob == 0.0 and alternatives == [["[[A]]", 0.0]]
    plain = await client.complete(MESSAGES)
    assert plain.token_logprobs is None and "logprobs" not in server.state.requests[-1]["body"]
    with pytest.raises(RequestRejected, match="reasoning model gives no log-probabilities"):
        await client_for("openai:o3-mini", server).complete(MESSAGES, top_logprobs=5)
    anthropic = make_chat_client("anthropic:claude-x", base_url=server.url, api_key="test-key", retry=FAST)
    with pytest.raises(RequestRejected, match="gives no log-probabilities"):
        await anthropic.complete(MESSAGES, top_logprobs=5)


@pytest.mark.parametrize("provider", sorted(CHAT_PROVIDERS))
def test_what_forms_are_told_about_log_probabilities_is_what_each_client_does(provider):
    """Forms ask evalhub.llm.capabilities (no SDK imported); clients say it themselves. The two agree."""
    from evalhub.llm.capabilities import LOGPROB_PROVIDERS

    assert CHAT_PROVIDERS[provider].gives_logprobs == (provider in LOGPROB_PROVIDERS)


# Two calls that ask the provider something different, each a spec and the call's keyword arguments. A
# parameter the cache key left out would have the second answered with the first's answer.
REASONING = "openai:gpt-5-mini?reasoning_effort=low"
LOCAL = "openai-compatible:{url}/v1|local"
ASKED_OTHERWISE = {
    "reasoning effort": ((REASONING, {"seed": 1}), ("openai:gpt-5-mini?reasoning_effort=high", {"seed": 1})),
    "no reasoning effort": ((REASONING, {"seed": 1}), ("openai:gpt-5-mini", {"seed": 1})),
    "reasoning flag": ((LOCAL, {}), (LOCAL + "?reasoning=true", {})),
    "seed": ((REASONING, {"seed": 1}), (REASONING, {"seed": 2})),
    "max tokens": ((REASONING, {"seed": 1}), (REASONING, {"seed": 1, "max_tokens": 99})),
    "repeat": ((REASONING, {"seed": 1}), (REASONING, {"seed": 1, "repeat": 1})),
    "log-probabilities": (("openai:gpt-4o", {}), ("openai:gpt-4o", {"top_logprobs": 5})),
    "temperature": (("openai:gpt-4o", {"seed": 1}), ("openai:gpt-4o", {"seed": 1, "temperature": 0.5})),
    "system message": (("openai:gpt-4o", {}), ("openai:gpt-4o", {"messages": [{"role": "system", "content": "x"}]})),
    "api": (("openai:gpt-4o", {}), ("openai:gpt-4o?api=responses", {})),
    "seed, which the Responses API does not take": (
        ("openai:gpt-5-pro", {"seed": 1}),
        ("openai:gpt-5-pro", {"seed": 2}),
    ),
    "reasoning summary": (
        ("openai:o3?api=responses", {"seed": 1}),
        ("openai:o3?api=responses&reasoning_summary=auto", {"seed": 1}),
    ),
}


@pytest.mark.parametrize("changed", sorted(ASKED_OTHERWISE))
async def test_a_call_that_asks_anything_else_is_sent_not_answered_from_the_cache(server, changed):
    cache = ResponseCache(":memory:")
    (spec, call), (other_spec, other_call) = ASKED_OTHERWISE[changed]

    async def ask(spec, call):
        extra = call.pop("messages", [])
        client = client_for(spec.format(url=server.url) if isinstance(spec, str) else spec, server, cache=cache)
        return await client.complete(extra + MESSAGES, **call)

    await ask(spec, dict(call))
    assert (await ask(spec, dict(call))).cached, "the same request twice is answered from the cache"
    assert server.request_count == 1
    assert not (await ask(other_spec, dict(other_call))).cached
    assert server.request_count == 2


async def test_an_azure_deployment_asked_at_another_api_version_is_sent(server, monkeypatch):
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "test-key")
    cache = ResponseCache(":memory:")
    for version in ("2024-10-21", "2024-10-21", "2025-04-01-preview"):
        await make_chat_client(f"azure:{server.url}|dep?api_version={version}", retry=FAST, cache=cache).complete(
            MESSAGES
        )
    assert server.request_count == 2


async def test_a_reasoning_model_always_samples_so_is_cached_only_per_seed_or_repeat(server):
    """It takes no temperature: asked "at temperature 0" it samples all the same, and an answer cached as
    deterministic would hand one judge another's sample (a debate agent's first round, say)."""
    client = client_for("openai:gpt-5-mini", server, cache=ResponseCache(":memory:"))
    await assert_cached_only_per_repeat(client, server, MESSAGES)


class FakeEntraCredential:
    """Stands where azure-identity's DefaultAzureCredential would (it needs Microsoft's login service)."""

    def __init__(self, token="entra-token-for-tests"):
        self.token, self.scopes, self.closed = token, [], False

    async def get_token(self, *scopes, **options):
        from azure.core.credentials import AccessToken

        self.scopes.append(scopes)
        if self.token is None:
            from azure.core.exceptions import ClientAuthenticationError

            raise ClientAuthenticationError("DefaultAzureCredential failed to retrieve a token")
        return AccessToken(self.token, int(time.time()) + 3600)

    async def close(self):
        self.closed = True


@pytest.mark.parametrize("streamed", [False, True])
async def test_azure_signs_in_with_an_entra_id_token_and_no_key(server, monkeypatch, streamed):
    from evalhub.llm.providers import openai_chat

    credential = FakeEntraCredential()
    monkeypatch.setattr(openai_chat, "entra_credential", lambda: credential)
    monkeypatch.delenv("AZURE_OPENAI_API_KEY", raising=False)
    server.state.api_key = credential.token
    client = make_chat_client(f"azure:{server.url}|my-gpt4o?auth=entra&api_version=2024-10-21", retry=FAST)
    assert await answer(client, MESSAGES, streamed) == "[[A]]"
    headers = {name.lower(): value for name, value in server.state.requests[-1]["headers"].items()}
    assert headers["authorization"] == f"Bearer {credential.token}" and "api-key" not in headers
    assert credential.scopes == [("https://cognitiveservices.azure.com/.default",)]
    await client.aclose()
    assert credential.closed


async def test_azure_without_an_entra_id_token_says_how_to_sign_in(server, monkeypatch):
    from evalhub.llm.providers import openai_chat

    monkeypatch.setattr(openai_chat, "entra_credential", lambda: FakeEntraCredential(token=None))
    client = make_chat_client(f"azure:{server.url}|dep?auth=entra&api_version=2024-10-21", retry=FAST)
    with pytest.raises(AuthenticationFailed, match=r"Entra ID gave no token .*az login"):
        await client.complete(MESSAGES)
    assert server.request_count == 0
    with pytest.raises(UnknownProvider, match="auth is key or entra") as refused:
        parse_spec({"provider": "azure", "model": "dep", "auth": "s3cr3t-value"})
    assert "s3cr3t" not in str(refused.value)
