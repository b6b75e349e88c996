"""Which HTTP client the provider SDKs get."""

from __future__ import annotations

from types import SimpleNamespace

import anthropic
import openai
import pytest

from evalhub.config import ConfigError
from evalhub.llm.providers.transport import HTTP_CLIENT_VARIABLE, async_http_client
from evalhub.llm.testing import Fail, FakeLLMServer


async def ignore(headers):
    return None


@pytest.mark.parametrize("sdk", [openai, anthropic], ids=["openai", "anthropic"])
async def test_the_sdks_get_their_aiohttp_client_by_default_and_their_httpx_one_on_request(sdk, monkeypatch):
    monkeypatch.delenv(HTTP_CLIENT_VARIABLE, raising=False)
    client = async_http_client(sdk, 12.0, ignore)
    assert isinstance(client, sdk.DefaultAioHttpClient)
    assert client.timeout.read == 12.0
    await client.aclose()
    monkeypatch.setenv(HTTP_CLIENT_VARIABLE, "HTTPX")
    client = async_http_client(sdk, 12.0, ignore)
    assert isinstance(client, sdk.DefaultAsyncHttpxClient)
    assert not isinstance(client, sdk.DefaultAioHttpClient)
    assert client.timeout.read == 12.0
    await client.aclose()


def test_an_sdk_installed_without_its_aiohttp_extra_gets_its_default_httpx_client(monkeypatch):
    monkeypatch.delenv(HTTP_CLIENT_VARIABLE, raising=False)

    def missing(**options):
        raise RuntimeError("To use the aiohttp client you must have installed the package with the `aiohttp` extra")

    def httpx_client(**options):
        return ("httpx", options["timeout"])

    sdk = SimpleNamespace(DefaultAioHttpClient=missing, DefaultAsyncHttpxClient=httpx_client)
    assert async_http_client(sdk, 5.0, ignore) == ("httpx", 5.0)


@pytest.mark.parametrize("choice", ["aiohttp", "httpx"])
@pytest.mark.parametrize("sdk", [openai, anthropic], ids=["openai", "anthropic"])
async def test_every_answer_s_headers_reach_the_hook_on_either_client(sdk, choice, monkeypatch):
    monkeypatch.setenv(HTTP_CLIENT_VARIABLE, choice)
    heard = []

    async def hear(headers):
        heard.append(headers.get("x-ratelimit-remaining-requests"))

    with FakeLLMServer(response_headers={"x-ratelimit-remaining-requests": "41"}) as fake:
        client = async_http_client(sdk, 5.0, hear)
        statuses = []
        try:
            for fail in (None, Fail(429, retry_after="1")):
                fake.fail_next(*[fail] if fail else [])
                response = await client.post(
                    f"{fake.url}/v1/chat/completions",
                    json={"messages": []},
                    headers={"authorization": "Bearer test-key"},
                )
                statuses.append(response.status_code)
        finally:
            await client.aclose()
    assert statuses == [200, 429]
    assert heard == ["41", "41"]


def test_an_unknown_choice_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setenv(HTTP_CLIENT_VARIABLE, "requests")
    with pytest.raises(ConfigError, match="EVALHUB_HTTP_CLIENT='requests' is not one of aiohttp, httpx"):
        async_http_client(openai, 5.0, ignore)
