"""Provider specs → clients. Modules load on first use, so torch loads only for local models.

A spec is a short string or a dict:
    "openai:gpt-4o-mini"
    "anthropic:claude-3-5-sonnet-latest"
    "openai-compatible:http://127.0.0.1:8001/v1|meta-llama/Llama-3.1-8B-Instruct"
    "openai:o3-mini?reasoning_effort=high"  (options after ?, as in a URL's query)
    "azure:my-gpt-4o-deployment"            (Azure OpenAI; endpoint and API version from the environment)
    "transformers:/models/llama"            (a local path, or a hub id where a hub is reachable)
    "heuristic" or "heuristic:reference"    (the offline judge and its variants)
    {"provider": "openai", "model": "gpt-4o-mini", "max_concurrency": 4}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalhub.core.registry import Registry
from evalhub.llm.types import CarriesCredential, UnknownProvider, redact

if TYPE_CHECKING:
    from evalhub.llm.base import ChatClient

# Specs are this registry's configuration: a ProviderSpec (OPTIONS_OF_PROVIDER says which options each takes).
CHAT_PROVIDERS: Registry[type[ChatClient]] = Registry(
    "chat provider",
    docs="extending/providers.md",
    what="provider",
    config=f"{__name__}:ProviderSpec",
    unknown=UnknownProvider,
    entries={
        "openai": "evalhub.llm.providers.openai_chat:OpenAIChat",
        "openai-compatible": "evalhub.llm.providers.openai_chat:OpenAICompatibleChat",
        "azure": "evalhub.llm.providers.openai_chat:AzureOpenAIChat",
        "anthropic": "evalhub.llm.providers.anthropic_chat:AnthropicChat",
        "transformers": "evalhub.llm.providers.transformers_chat:TransformersChat",
        "yescieval": "evalhub.llm.providers.yescieval_judges:YesciEvalJudge",
        "heuristic": "evalhub.llm.providers.heuristic:HeuristicJudge",
        "arithmetic": "evalhub.llm.providers.arithmetic:ArithmeticCandidate",
    },
)
SCORERS: Registry[type[Any]] = Registry(
    "log-probability scorer",
    docs="extending/providers.md",
    config=f"{__name__}:ProviderSpec",
    unknown=UnknownProvider,
    entries={
        "transformers": "evalhub.llm.scoring.transformers_scorer:TransformersScorer",
        "openai-compatible": "evalhub.llm.scoring.completions_scorer:CompletionsScorer",
    },
)
DEFAULT_MODELS = {"heuristic": "balanced", "arithmetic": "calculator"}
# Options a string spec may carry after `?` (a dict spec may carry any its client takes): the values
# are text, except the booleans.
SPEC_OPTIONS = {
    "reasoning": bool,
    "reasoning_effort": str,
    "reasoning_summary": str,  # the Responses API's reasoning summary: auto, concise or detailed
    "api": str,  # OpenAI's API: chat (completions) or responses
    "api_version": str,
    "auth": str,  # Azure: key (AZURE_OPENAI_API_KEY) or entra (a Microsoft Entra ID token, azure-identity)
    "api_key_env": str,
    "headers_env": str,  # the variable holding extra headers as JSON (a gateway's attribution or auth)
    "thinking": str,  # Claude's extended thinking: "adaptive" or a budget of tokens
    "effort": str,  # Claude's effort (output_config.effort)
}
OPTIONS_OF_PROVIDER = {
    "openai": {"reasoning", "reasoning_effort", "reasoning_summary", "api", "api_key_env", "headers_env"},
    "openai-compatible": {"reasoning", "reasoning_effort", "reasoning_summary", "api", "api_key_env", "headers_env"},
    "azure": {
        *("reasoning", "reasoning_effort", "reasoning_summary", "api", "api_version", "api_key_env", "headers_env"),
        "auth",
    },
    "anthropic": {"api_key_env", "headers_env", "thinking", "effort"},
}
# A spec names its credential (`api_key_env=NAME`, or the provider's variable), never carries one: specs
# are stored, shown on pages and exported. Options and URL query names that would carry one are refused.
CREDENTIAL_NAME = re.compile(
    r"(?i)(^|[_-])(api[_-]?key|key|token|secret|password|passwd|auth|authorization|sig|signature)$"
)
CREDENTIAL_OPTIONS = ("headers", "default_headers", "extra_headers")  # a header may carry one too
VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class ProviderSpec:
    provider: str
    model: str
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        from urllib.parse import urlencode

        query = {name: value for name, value in self.options.items() if name in SPEC_OPTIONS}
        suffix = "?" + urlencode({k: str(v).lower() if isinstance(v, bool) else v for k, v in query.items()})
        suffix = suffix if query else ""
        if self.base_url:
            return f"{self.provider}:{self.base_url}|{self.model}{suffix}"
        return f"{self.provider}:{self.model}{suffix}"


def parse_spec(spec: str | dict[str, Any] | ProviderSpec) -> ProviderSpec:
    """The spec, checked: a provider evalhub knows, a model, known options, and no credential in it. A
    refusal's message is redacted (evalhub.llm.types.redact): it is shown on forms and job pages."""
    if isinstance(spec, ProviderSpec):
        return spec
    try:
        return _without_credentials(_parsed(spec))
    except UnknownProvider as error:
        raise type(error)(redact(str(error))) from None


def credential_carried(spec: str) -> str:
    """Why `spec` may not be kept (it carries a credential), or "". Asked of every spec a run keeps,
    whether or not its provider is known here (tests and embedders register stand-in clients under
    names the registry does not know): one rule for every door that starts a run."""
    try:
        parse_spec(spec)
    except CarriesCredential as error:
        return str(error)
    except UnknownProvider:
        if redact(spec) != spec:  # a stand-in's spec is still refused when it holds what looks like a key
            return f"{redact(spec)!r}: a spec must not carry a credential (name it instead: api_key_env=VARIABLE)."
    return ""


def _parsed(spec: str | dict[str, Any]) -> ProviderSpec:
    if isinstance(spec, dict):
        options = dict(spec)
        provider = str(options.pop("provider", ""))
        model = str(options.pop("model", DEFAULT_MODELS.get(provider, "")))
        base_url = options.pop("base_url", None)
        return _checked(ProviderSpec(provider, model, base_url, options))
    if not isinstance(spec, str) or not spec.strip():
        raise UnknownProvider(f"a provider spec must be a non-empty string or a dict, not {spec!r}.")
    provider, _, rest = spec.strip().partition(":")
    rest, options = _spec_options(spec, rest)
    if unsupported := sorted(set(options) - OPTIONS_OF_PROVIDER.get(provider, set())):
        raise UnknownProvider(f"{spec!r}: {provider} takes no {', '.join(unsupported)} option.")
    base_url = None
    if (
        provider in ("openai-compatible", "azure")
        and rest.startswith(("http://", "https://"))
        or (provider == "openai-compatible")
    ):
        base_url, bar, model = rest.rpartition("|")
        if not bar or not base_url.startswith(("http://", "https://")):
            raise UnknownProvider(
                f"{spec!r}: write {provider} specs with a server as '{provider}:https://host/…|model-name'."
            )
    elif provider == "anthropic" and rest.startswith(("http://", "https://")):
        # An Anthropic-compatible server, named like openai-compatible ones: anthropic:URL|model.
        base_url, bar, model = rest.rpartition("|")
        if not bar:
            raise UnknownProvider(
                f"{spec!r}: write Anthropic-compatible specs as 'anthropic:http://host:port|model-name'."
            )
    else:
        model = rest or DEFAULT_MODELS.get(provider, "")
    return _checked(ProviderSpec(provider, model, base_url, options))


def _spec_options(spec: str, rest: str) -> tuple[str, dict[str, Any]]:
    """The spec without its `?name=value&…` part, and those options (only the SPEC_OPTIONS)."""
    from urllib.parse import parse_qsl

    rest, _, query = rest.partition("?")
    options: dict[str, Any] = {}
    for name, value in parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query)) if query else ():
        if name not in SPEC_OPTIONS and CREDENTIAL_NAME.search(name):
            raise CarriesCredential(f"a spec must not carry {name} (name it instead: add api_key_env=VARIABLE).")
        if name not in SPEC_OPTIONS:
            raise UnknownProvider(f"{spec!r}: unknown option {name!r}; a spec takes {', '.join(sorted(SPEC_OPTIONS))}.")
        if SPEC_OPTIONS[name] is bool:
            if value.lower() not in ("true", "false", "1", "0"):
                raise UnknownProvider(f"{spec!r}: {name} is true or false, not {value!r}.")
            options[name] = value.lower() in ("true", "1")
        else:
            options[name] = value
    return rest, options


def _without_credentials(spec: ProviderSpec) -> ProviderSpec:
    from urllib.parse import parse_qsl, urlsplit

    advice = "name it instead: set the provider's variable, or add api_key_env=VARIABLE to the spec"
    if spec.base_url:
        url = urlsplit(spec.base_url)
        if url.username or url.password:
            raise CarriesCredential(f"a spec's server URL must not carry a user or password ({advice}).")
        if any(CREDENTIAL_NAME.search(name) for name, _ in parse_qsl(url.query, keep_blank_values=True)):
            raise CarriesCredential(f"a spec's server URL must not carry a key in its query ({advice}).")
    named = [
        name
        for name in spec.options
        if CREDENTIAL_NAME.search(name) and name not in SPEC_OPTIONS or name in CREDENTIAL_OPTIONS
    ]  # `auth` says how to sign in (key or entra), checked for those two values
    if named:
        raise CarriesCredential(f"a spec must not carry {', '.join(sorted(named))} ({advice}).")
    for option in ("api_key_env", "headers_env"):
        variable = spec.options.get(option)
        if variable is not None and not VARIABLE_NAME.match(str(variable)):
            raise CarriesCredential(f"{option} names an environment variable (letters, digits and _), not a value.")
    return spec


def _checked(spec: ProviderSpec) -> ProviderSpec:
    if spec.provider not in CHAT_PROVIDERS:
        raise UnknownProvider(CHAT_PROVIDERS.unknown_message(spec.provider))
    if not spec.model:
        raise UnknownProvider(f"provider {spec.provider!r} needs a model, e.g. '{spec.provider}:MODEL'.")
    _check_option_values(spec)
    return spec


def _check_option_values(spec: ProviderSpec) -> None:
    """Option values as the providers' SDKs type them, checked where a spec is read (a form, a command,
    a job's own check), not by every call of a job."""
    from evalhub.llm import option_values
    from evalhub.llm.model_names import APIS, api_for

    options = spec.options
    if "auth" in options and options["auth"] not in ("key", "entra"):
        # Not repeated: a value here may be the very credential the option must not carry.
        raise UnknownProvider(f"{spec.provider}:{spec.model}: auth is key or entra (the way to sign in, not a key).")
    if "api" in options and options["api"] not in APIS:
        raise UnknownProvider(f"{spec.provider}:{spec.model}: api is chat or responses, not {options['api']!r}.")
    if "reasoning_summary" in options:
        if options["reasoning_summary"] not in option_values.reasoning_summaries():
            raise UnknownProvider(
                f"{spec.provider}:{spec.model}: reasoning_summary is one of "
                f"{', '.join(option_values.reasoning_summaries())} (OpenAI's SDK), "
                f"not {options['reasoning_summary']!r}."
            )
        if api_for(spec.provider, spec.model, options) != "responses":
            raise UnknownProvider(
                f"{spec.provider}:{spec.model}: a reasoning summary comes only from the Responses API: "
                "add api=responses."
            )
    if "reasoning_effort" in options and options["reasoning_effort"] not in option_values.reasoning_efforts():
        raise UnknownProvider(
            f"{spec.provider}:{spec.model}: reasoning_effort is one of {', '.join(option_values.reasoning_efforts())} "
            f"(the levels OpenAI's SDK knows), not {options['reasoning_effort']!r}."
        )
    if "effort" in options and options["effort"] not in option_values.claude_efforts():
        raise UnknownProvider(
            f"{spec.provider}:{spec.model}: effort is one of {', '.join(option_values.claude_efforts())} "
            f"(the levels Anthropic's SDK knows), not {options['effort']!r}."
        )
    if "thinking" in options and option_values.thinking_budget(options["thinking"]) is None:
        raise UnknownProvider(
            f"{spec.provider}:{spec.model}: thinking is 'adaptive' or a budget of tokens of at least "
            f"{option_values.MIN_THINKING_BUDGET} (Anthropic's minimum), not {options['thinking']!r}."
        )


def get_chat_client(spec: str | dict[str, Any] | ProviderSpec, **options: Any) -> ChatClient:
    """A chat client for `spec`; `options` (cache, meter, limits, prices…) go to its constructor."""
    parsed = parse_spec(spec)
    client_class = CHAT_PROVIDERS[parsed.provider]
    arguments = {**parsed.options, **options}
    if parsed.base_url:
        arguments["base_url"] = parsed.base_url
    client: ChatClient = client_class(parsed.model, **arguments)
    return client


def get_scorer(spec: str | dict[str, Any] | ProviderSpec, **options: Any) -> Any:
    """A log-probability scorer (transformers in-process, or an OpenAI-compatible completions server)."""
    parsed = parse_spec(spec)
    if parsed.provider not in SCORERS:
        raise UnknownProvider(SCORERS.unknown_message(parsed.provider))
    arguments = {**parsed.options, **options}
    if parsed.base_url:
        arguments["base_url"] = parsed.base_url
    return SCORERS[parsed.provider](parsed.model, **arguments)
