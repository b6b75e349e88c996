"""Which HTTP client the provider SDKs get."""

from __future__ import annotations

from types import SimpleNamespace

import anthropic
import openai
import pytest

from evalhub.config import ConfigError
from evalhub.llm.providers.transport import HTTP_CLIENT_VARIABLE, async_http_client


@pytest.mark.parametrize("sdk", [openai, anthropic], ids=["openai", "anthropic"])
async def test_the_sdks_get_their_aiohttp_client_by_default_and_their_own_on_request(sdk, monkeypatch):
    monkeypatch.delenv(HTTP_CLIENT_VARIABLE, raising=False)
    client = async_http_client(sdk, 12.0)
    assert isinstance(client, sdk.DefaultAioHttpClient)
    assert client.timeout.read == 12.0
    await client.aclose()
    monkeypatch.setenv(HTTP_CLIENT_VARIABLE, "HTTPX")
    assert async_http_client(sdk, 12.0) is None


def test_an_sdk_installed_without_its_aiohttp_extra_keeps_its_default_client(monkeypatch):
    monkeypatch.delenv(HTTP_CLIENT_VARIABLE, raising=False)

    def missing(**options):
        raise RuntimeError("To use the aiohttp client you must have installed the package with the `aiohttp` extra")

    assert async_http_client(SimpleNamespace(DefaultAioHttpClient=missing), 5.0) is None


def test_an_unknown_choice_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setenv(HTTP_CLIENT_VARIABLE, "requests")
    with pytest.raises(ConfigError, match="EVALHUB_HTTP_CLIENT='requests' is not one of aiohttp, httpx"):
        async_http_client(openai, 5.0)
