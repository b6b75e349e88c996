"""OpenAI's chat completions through the official SDK, on OpenAI, Azure OpenAI and any server that speaks
them (vLLM, Ollama, llama.cpp, LM Studio, LiteLLM's proxy, OpenRouter).

The SDK is the transport (`openai.AsyncOpenAI`, `openai.AsyncAzureOpenAI`) on its aiohttp-backed HTTP
client where installed (evalhub.llm.providers.transport): it reads the proxy variables
(`HTTPS_PROXY`, `HTTP_PROXY`, `NO_PROXY`), the organisation and project, and follows OpenAI's new
parameters and endpoints as they come. evalhub keeps its own retries, limits, cache and accounting
around it (evalhub.llm.base): the SDK's own retries are off.

Reasoning models (OpenAI's o-series and GPT-5 family, by name, or any model with `reasoning=true` in
its spec) are called as OpenAI defines them: `max_completion_tokens` instead of `max_tokens`, no
temperature (only the default is accepted), `reasoning_effort` when the spec gives one, and the
reasoning tokens counted in the call's usage. An answer with no choice, a refusal or a content-filter
stop is a failed call with its reason, never an empty answer.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from typing import Any

import openai

from evalhub.llm.base import ChatClient, Failure, Sampling, StreamEnded, UnusableAnswer
from evalhub.llm.model_names import api_for, is_reasoning_model, is_responses_only, needs_tools
from evalhub.llm.option_values import reasoning_efforts
from evalhub.llm.providers import openai_responses
from evalhub.llm.providers.http_errors import classify_status, classify_transport, connection_failure
from evalhub.llm.providers.transport import async_http_client, headers_named_by
from evalhub.llm.types import AuthenticationFailed, Completion, Message, RequestRejected

OPENAI_KEY = "OPENAI_API_KEY"
AZURE_KEY = "AZURE_OPENAI_API_KEY"
AZURE_ENDPOINT = "AZURE_OPENAI_ENDPOINT"
AZURE_API_VERSION = "OPENAI_API_VERSION"  # the variable the SDK itself reads
# What to do about a parameter a model refuses (the 400's `param`), in evalhub's terms.
PARAMETER_ADVICE = {
    "max_tokens": "it is a reasoning model: add ?reasoning=true to the judge's spec, and evalhub sends "
    "max_completion_tokens and no temperature",
    "temperature": "it takes only its default temperature: add ?reasoning=true to the judge's spec",
    "reasoning_effort": "it takes no reasoning effort: drop ?reasoning_effort from the judge's spec",
    "reasoning.effort": "it takes no reasoning effort: drop ?reasoning_effort from the judge's spec",
    "logprobs": "it gives no log-probabilities: run the judge without probabilities",
    "top_logprobs": "it gives no log-probabilities: run the judge without probabilities",
    "seed": "it takes no seed: run it without one",
}


EFFORT_PARAMS = ("reasoning_effort", "reasoning.effort")  # chat completions' name, the Responses API's


class OpenAIChat(ChatClient):
    provider = "openai"
    shares_limits = True
    gives_logprobs = True  # chat models do; a reasoning model's call is refused below
    key_variable = OPENAI_KEY

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        reasoning: bool | None = None,
        reasoning_effort: str | None = None,
        reasoning_summary: str | None = None,
        api: str | None = None,
        headers_env: str | None = None,
        **options: Any,
    ) -> None:
        super().__init__(model, endpoint=base_url or "", **options)
        self.base_url = base_url
        self._api_key = api_key
        if api_key_env:  # the spec names the variable its key is in (a spec never carries a key)
            self.key_variable = api_key_env
        self.reasoning = self._is_reasoning(model) if reasoning is None else bool(reasoning)
        if reasoning_effort is not None and reasoning_effort not in reasoning_efforts():
            raise ValueError(
                f"reasoning_effort must be one of {', '.join(reasoning_efforts())}, not {reasoning_effort!r}"
            )
        self.reasoning_effort = reasoning_effort
        self.headers_env = headers_env  # the variable holding the extra headers (a gateway's), if any
        self.reasoning_summary = reasoning_summary  # the Responses API's reasoning summary, when asked
        # Chat completions, or the Responses API for the models only it serves (or as the spec says).
        self.api = api_for(self.provider, model, {"api": api})
        self._client: openai.AsyncOpenAI | None = None

    def _is_reasoning(self, model: str) -> bool:
        return is_reasoning_model(model) or is_responses_only(model) and not needs_tools(model)

    # --- the SDK client ----------------------------------------------------------------

    def _key(self) -> str:
        key = self._api_key or os.environ.get(self.key_variable) or self._default_key()
        if not key:
            raise AuthenticationFailed(self.provider, self.model, f"no API key: set {self.key_variable}")
        return key

    def _default_key(self) -> str:
        return ""

    def sdk(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self._client = self._make_sdk(
                api_key=self._key(),
                default_headers=headers_named_by(self.headers_env, self.provider, self.model),
                max_retries=0,  # evalhub.llm.base retries, under its shared limits
                timeout=self.timeout_s,
                http_client=async_http_client(openai, self.timeout_s, self.heed_rate_headers),
            )
        return self._client

    def _make_sdk(self, **common: Any) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=self.base_url, **common)

    # --- requests ----------------------------------------------------------------------

    def _request(self, messages: list[Message], sampling: Sampling) -> dict[str, Any]:
        if self.provider != "openai-compatible" and needs_tools(self.model):
            raise RequestRejected(
                self.provider,
                self.model,
                "this model answers only with tools evalhub does not give a judge (web or file search, a "
                "computer): use a reasoning model without them (e.g. o3, gpt-5, gpt-5-pro)",
            )
        if self.api == "responses":
            return openai_responses.request(self, messages, sampling)
        request: dict[str, Any] = {"model": self.model, "messages": messages}
        if self.reasoning:
            request["max_completion_tokens"] = sampling.max_tokens
            if self.reasoning_effort:
                request["reasoning_effort"] = self.reasoning_effort
        else:
            request["max_tokens"] = sampling.max_tokens
            request["temperature"] = sampling.temperature
        if sampling.seed is not None:
            request["seed"] = sampling.seed
        if sampling.top_logprobs:
            if self.reasoning:
                raise RequestRejected(
                    self.provider, self.model, "a reasoning model gives no log-probabilities: run without probabilities"
                )
            request["logprobs"], request["top_logprobs"] = True, sampling.top_logprobs
        return request

    @property
    def always_samples(self) -> bool:  # type: ignore[override]  # a reasoning model takes no temperature
        return self.reasoning

    def _sent(self, messages: list[Message], sampling: Sampling) -> dict[str, Any]:
        # The Responses API takes no seed, yet a run's n-th seeded sample is its own answer.
        seed = {"seed": sampling.seed} if self.api == "responses" else {}
        return {**self._request(messages, sampling), **seed}

    async def _complete_once(self, messages: list[Message], sampling: Sampling) -> Completion:
        if self.api == "responses":
            return await openai_responses.complete(self, self._request(messages, sampling))
        started = time.perf_counter()
        response = await self.sdk().chat.completions.create(**self._request(messages, sampling))
        usage = response.usage
        if not response.choices:
            spent = self._spent(usage.model_dump() if usage else {})
            raise UnusableAnswer("the answer held no choice (an empty answer from the server)", retry=True, spent=spent)
        choice = response.choices[0]
        completion = Completion(
            text=choice.message.content or "",
            provider=self.provider,
            model=self.model,
            input_tokens=usage.prompt_tokens if usage else 0,
            output_tokens=usage.completion_tokens if usage else 0,
            latency_s=time.perf_counter() - started,
            finish_reason=choice.finish_reason or "",
            raw=response.model_dump(mode="json", exclude_unset=True, exclude={"choices": {0: {"logprobs"}}}),
            reasoning_tokens=_reasoning_tokens(usage),
            token_logprobs=_token_logprobs(choice) if sampling.top_logprobs else None,
        )
        return self.check_usable(completion, getattr(choice.message, "refusal", None))

    async def _stream_once(
        self, messages: list[Message], sampling: Sampling, emit: Callable[[str], None]
    ) -> Completion:
        """Through the SDK's documented raw surface (`with_streaming_response`): its request, headers,
        proxies and errors, with the server-sent events read here. Its typed stream made a pydantic
        object of every chunk: 13 ms of CPU for a 200-word answer against 1.7 ms this way, for a
        worker streaming hundreds of debate turns at once (benchmarks/openai_stream_cpu.py)."""
        if self.api == "responses":
            return await openai_responses.stream(self, self._request(messages, sampling), emit)
        started = time.perf_counter()
        request = {**self._request(messages, sampling), "stream": True, "stream_options": {"include_usage": True}}
        parts: list[str] = []
        refusal: list[str] = []
        finish, usage, events = "", dict[str, Any](), 0
        async with self.sdk().chat.completions.with_streaming_response.create(**request) as response:
            async for line in response.iter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    continue
                event = json.loads(data)
                events += 1
                if "error" in event:
                    raise RequestRejected(self.provider, self.model, f"error in stream: {event['error']}")
                usage = event.get("usage") or usage
                for choice in event.get("choices") or ():
                    delta = choice.get("delta") or {}
                    if text := delta.get("content"):
                        parts.append(text)
                        emit(text)
                    if said := delta.get("refusal"):
                        refusal.append(said)
                    finish = choice.get("finish_reason") or finish
        if not finish:  # the connection closed early: what came is not the whole answer
            if events and not parts and usage:
                cause = "the answer held no choice (an empty answer from the server)"
                raise UnusableAnswer(cause, retry=True, spent=self._spent(usage))
            raise StreamEnded(events, "a chunk with a finish_reason")
        details = usage.get("completion_tokens_details") or {}
        completion = Completion(
            text="".join(parts),
            provider=self.provider,
            model=self.model,
            input_tokens=usage.get("prompt_tokens") or 0,
            output_tokens=usage.get("completion_tokens") or 0,
            latency_s=time.perf_counter() - started,
            finish_reason=finish,
            raw={"streamed": True},
            reasoning_tokens=int(details.get("reasoning_tokens") or 0),
        )
        return self.check_usable(completion, "".join(refusal) or None)

    def _spent(self, usage: dict[str, Any]) -> Completion:
        """What an answer with no choice still billed, from its usage."""
        details = usage.get("completion_tokens_details") or {}
        return Completion(
            text="",
            provider=self.provider,
            model=self.model,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            reasoning_tokens=int(details.get("reasoning_tokens") or 0),
        )

    def check_usable(self, completion: Completion, refusal: str | None) -> Completion:
        """The completion, when it holds an answer; else the call fails with why, its usage counted."""
        if completion.text:
            return completion
        finish = completion.finish_reason
        if refusal:
            cause, retry = f"the model refused: {refusal[:300]}", False
        elif finish == "content_filter":
            cause, retry = "the provider's content filter stopped the answer", False
        elif finish == "length" and self.reasoning:
            cause = (
                "the model spent every token it was allowed on reasoning and gave no answer: "
                "raise the run's max tokens (a reasoning model's count includes its reasoning)"
            )
            retry = False
        elif finish == "length":
            cause, retry = "the model gave no answer within the run's max tokens: raise them", False
        else:
            # Nothing said and nothing to say why: not a verdict. Not asked again: at temperature 0 the same
            # question gets the same nothing (a run asks again for the units that failed).
            cause, retry = f"the model answered nothing (finish_reason {finish or 'none'!r})", False
        raise UnusableAnswer(cause, retry=retry, spent=completion)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        await super().aclose()

    # --- failures ----------------------------------------------------------------------

    def _classify(self, error: Exception) -> Failure:
        if isinstance(error, UnusableAnswer):
            return Failure(retry=error.retry, cause=error.cause, error=RequestRejected)
        if failure := connection_failure(error):
            return failure
        if isinstance(error, openai.APIStatusError):
            message = _message_of(error)
            param = _param_of(error)
            if error.status_code == 400 and param in EFFORT_PARAMS and _code_of(error) == "unsupported_value":
                # It takes efforts, not this one (o3 refuses "minimal"): the advice keys on the code.
                cause = (
                    f"{self.model} does not take reasoning effort {self.reasoning_effort!r} ({message[:200]}): "
                    "set ?reasoning_effort= in the judge's spec to one it takes"
                )
                return Failure(retry=False, cause=cause, error=RequestRejected)
            if error.status_code == 400 and param in PARAMETER_ADVICE:
                cause = f"{self.model} does not take {param!r} ({message[:200]}): {PARAMETER_ADVICE[param]}"
                return Failure(retry=False, cause=cause, error=RequestRejected)
            retry_after = error.response.headers.get("retry-after") if error.response is not None else None
            return classify_status(error.status_code, retry_after, message, self.key_variable)
        if isinstance(error, openai.APITimeoutError):
            return Failure(retry=True, cause=f"timed out after {self.timeout_s:.0f} s")
        if isinstance(error, openai.APIConnectionError):
            return Failure(retry=True, cause=f"connection failed ({type(error.__cause__ or error).__name__})")
        return classify_transport(error) or super()._classify(error)


def _error_object(error: openai.APIStatusError) -> dict[str, Any]:
    body = error.body if isinstance(error.body, dict) else {}
    inner = body["error"] if isinstance(body.get("error"), dict) else body
    return inner


def _message_of(error: openai.APIStatusError) -> str:
    """The provider's own words (OpenAI's error object's `message`), else the SDK's."""
    message = _error_object(error).get("message")
    return message if isinstance(message, str) and message else str(error.message or error)


def _code_of(error: openai.APIStatusError) -> str:
    """The error's code (`unsupported_parameter`, `unsupported_value`…); "" where it has none."""
    code = getattr(error, "code", None) or _error_object(error).get("code")
    return code if isinstance(code, str) else ""


def _param_of(error: openai.APIStatusError) -> str:
    """The parameter a 400 names (OpenAI's error object has `param`); "" where it names none."""
    param = getattr(error, "param", None) or _error_object(error).get("param")
    return param if isinstance(param, str) else ""


def _token_logprobs(choice: Any) -> list[list[Any]] | None:
    """The answer's tokens with their top alternatives, as Completion keeps them; None where the
    server sent none (a compatible server may ignore the request)."""
    content = getattr(getattr(choice, "logprobs", None), "content", None)
    if not content:
        return None
    return [[t.token, t.logprob, [[a.token, a.logprob] for a in t.top_logprobs or ()]] for t in content]


def _reasoning_tokens(usage: Any) -> int:
    details = getattr(usage, "completion_tokens_details", None) if usage is not None else None
    return int(getattr(details, "reasoning_tokens", 0) or 0)


class OpenAICompatibleChat(OpenAIChat):
    """A self-hosted OpenAI-compatible server; a key is optional (OPENAI_COMPATIBLE_API_KEY). Its models
    are not OpenAI's: one is called as a reasoning model only when its spec says `reasoning=true`."""

    provider = "openai-compatible"
    key_variable = "OPENAI_COMPATIBLE_API_KEY"

    def __init__(self, model: str, *, base_url: str, **options: Any) -> None:
        super().__init__(model, base_url=base_url, **options)

    def _is_reasoning(self, model: str) -> bool:
        return False

    def _default_key(self) -> str:
        return "not-needed"  # most local servers ignore the key, but the SDK insists on one


ENTRA_SCOPE = "https://cognitiveservices.azure.com/.default"  # Azure OpenAI's scope for Entra ID tokens


def entra_credential() -> Any:
    """Azure's default credential chain (azure-identity): a service principal from AZURE_CLIENT_ID /
    AZURE_TENANT_ID / AZURE_CLIENT_SECRET, workload identity, a managed identity, or the Azure CLI's login."""
    from azure.identity.aio import DefaultAzureCredential

    return DefaultAzureCredential()


class AzureOpenAIChat(OpenAIChat):
    """Azure OpenAI through the SDK's `AsyncAzureOpenAI`: the spec names the deployment (`azure:DEPLOYMENT`,
    or `azure:https://RESOURCE.openai.azure.com|DEPLOYMENT`), the endpoint comes from the spec or
    AZURE_OPENAI_ENDPOINT, the API version from `?api_version=` or OPENAI_API_VERSION, the key from
    AZURE_OPENAI_API_KEY, or, with `?auth=entra`, a Microsoft Entra ID token from azure-identity's default
    credential (no key at all). A deployment's name need not be its model's: `?reasoning=true` marks a
    reasoning model's deployment (names that start like OpenAI's reasoning models are one already)."""

    provider = "azure"
    key_variable = AZURE_KEY

    def __init__(self, model: str, *, api_version: str | None = None, auth: str | None = None, **options: Any) -> None:
        super().__init__(model, **options)
        self.api_version = api_version
        self.auth = auth or "key"
        self._credential: Any = None

    def _key(self) -> str:
        return "" if self.auth == "entra" else super()._key()

    def _sent(self, messages: list[Message], sampling: Sampling) -> dict[str, Any]:
        # The API version is sent in the URL, and a version may change what a deployment answers.
        version = self.api_version or os.environ.get(AZURE_API_VERSION, "")
        return {**super()._sent(messages, sampling), "api-version": version}

    def _make_sdk(self, **common: Any) -> openai.AsyncOpenAI:
        endpoint = self.base_url or os.environ.get(AZURE_ENDPOINT)
        version = self.api_version or os.environ.get(AZURE_API_VERSION)
        if not endpoint or not version:
            missing = [name for name, value in ((AZURE_ENDPOINT, endpoint), (AZURE_API_VERSION, version)) if not value]
            raise RequestRejected(
                self.provider,
                self.model,
                f"Azure OpenAI needs {' and '.join(missing)} (or the spec's endpoint and ?api_version=)",
            )
        if self.auth == "entra":
            from azure.identity.aio import get_bearer_token_provider

            self._credential = entra_credential()
            common = {**common, "api_key": None}
            common["azure_ad_token_provider"] = get_bearer_token_provider(self._credential, ENTRA_SCOPE)
        return openai.AsyncAzureOpenAI(azure_endpoint=endpoint, api_version=version, **common)

    def _classify(self, error: Exception) -> Failure:
        from azure.core.exceptions import ClientAuthenticationError

        if isinstance(error, ClientAuthenticationError):
            cause = (
                f"Microsoft Entra ID gave no token ({str(error.message or error)[:300]}): sign in (az login), or set "
            )
            cause += "AZURE_CLIENT_ID, AZURE_TENANT_ID and AZURE_CLIENT_SECRET, or give the worker a managed identity"
            return Failure(retry=False, cause=cause, error=AuthenticationFailed)
        return super()._classify(error)

    async def aclose(self) -> None:
        await super().aclose()
        if self._credential is not None:
            await self._credential.close()
            self._credential = None
