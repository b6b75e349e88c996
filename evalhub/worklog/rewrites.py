"""LLM rewrites of texts (GEM's C.1 preprocessing, C.4 summaries, D.3/D.4 strategies), stored once.

Every prompt is answered at most once per (purpose, provider, prompt version, messages):
the answer lands in `DerivedText`, so all GPU workers, on any machine, and every later run
reuse it. Missing answers are requested concurrently; a failure is returned per prompt,
never raised, so one bad call costs one row.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence

from evalhub.core.gem.prompts import PROMPT_VERSION
from evalhub.llm import event_loop
from evalhub.llm.registry import parse_spec
from evalhub.llm.types import LLMError, UnknownProvider
from evalhub.system.model_access import chat_client
from evalhub.worklog.models import DerivedText

MAX_TOKENS = 4000  # GEM, Appendix C: temperature 0 and at most 4000 output tokens in every call


class RewriteFailed(str):
    """The cause of a failed rewrite (a str, so it can be recorded as is)."""


def messages_key(messages: Sequence[dict[str, str]]) -> str:
    return hashlib.sha256(json.dumps(list(messages), sort_keys=True).encode()).hexdigest()


def rewrite_all(purpose: str, provider: str, prompts: Sequence[list[dict[str, str]]]) -> dict[str, str]:
    """{messages_key: answer or RewriteFailed} for every prompt."""
    keys = {messages_key(m): m for m in prompts}
    stored = dict(
        DerivedText.objects.filter(
            purpose=purpose, provider=provider, prompt_version=PROMPT_VERSION, source_sha256__in=list(keys)
        ).values_list("source_sha256", "text")
    )
    missing = {key: messages for key, messages in keys.items() if key not in stored}
    if not missing:
        return stored
    answers = event_loop.run(_ask_all(provider, missing))
    DerivedText.objects.bulk_create(
        [
            DerivedText(purpose=purpose, provider=provider, prompt_version=PROMPT_VERSION, source_sha256=key, text=text)
            for key, text in answers.items()
            if not isinstance(text, RewriteFailed)
        ],
        ignore_conflicts=True,  # another worker stored the same rewrite first: both are the same call
    )
    return {**stored, **answers}


async def _ask_all(provider: str, prompts: dict[str, list[dict[str, str]]]) -> dict[str, str]:
    try:
        client = chat_client(provider)
    except (LLMError, UnknownProvider) as error:
        return {key: RewriteFailed(str(error)) for key in prompts}

    async def ask(messages: list[dict[str, str]]) -> str:
        try:
            completion = await client.complete(messages, temperature=0.0, max_tokens=MAX_TOKENS)
        except LLMError as error:
            return RewriteFailed(str(error))
        text = completion.text.strip()
        return text or RewriteFailed(f"{provider} returned an empty answer.")

    try:
        answers = await asyncio.gather(*(ask(messages) for messages in prompts.values()))
    finally:
        await client.aclose()
    return dict(zip(prompts, answers, strict=True))


def stored_completer(
    purpose: str, provider: str, dry_runs: Iterable[Callable[[Callable[[list[dict[str, str]]], str]], object]]
) -> Callable[[list[dict[str, str]]], str]:
    """A `complete(messages)` for code that asks an LLM inside a loop (perturbations, GEM strategies).

    Each dry run calls its code with a recording stand-in, so every prompt is known first; they
    are all asked at once (stored, concurrent), and the returned function answers from the
    store. A failed prompt raises LLMError with its cause when its code asks for it.
    """
    asked: list[list[dict[str, str]]] = []

    def record(messages: list[dict[str, str]]) -> str:
        asked.append(messages)
        return "…"

    for dry_run in dry_runs:
        dry_run(record)
    answers = rewrite_all(purpose, provider, asked)
    try:
        spec = parse_spec(provider)
        names = (spec.provider, spec.model)
    except UnknownProvider:
        names = (provider, "")  # its rewrites failed with the reason already

    def complete(messages: list[dict[str, str]]) -> str:
        answer = answers.get(messages_key(messages))
        if answer is None or isinstance(answer, RewriteFailed):
            # Named as every model failure is: this once raised TypeError (LLMError takes provider,
            # model and cause), which the runners' `except LLMError` let through to fail the chunk.
            raise LLMError(*names, answer or "the prompt was not prepared in the dry run.")
        return answer

    return complete
