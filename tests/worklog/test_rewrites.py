"""Prompts asked of an LLM inside a loop (LLM perturbations, GEM strategies): asked once, stored,
answered from the store; a failed one fails as a model call does."""

from __future__ import annotations

import pytest

from evalhub.llm.types import LLMError
from evalhub.worklog import rewrites
from evalhub.worklog.rewrites import RewriteFailed, messages_key, stored_completer

PROMPT = [{"role": "user", "content": "Rewrite this."}]


def test_a_failed_rewrite_raises_the_model_error_the_runners_record_as_a_row_issue(db, monkeypatch):
    """It raised TypeError (LLMError was given one argument of three), which the runners' `except
    LLMError` let through: one unreachable rewrite model failed the whole chunk."""
    monkeypatch.setattr(
        rewrites, "rewrite_all", lambda purpose, provider, asked: {messages_key(PROMPT): RewriteFailed("refused")}
    )
    complete = stored_completer("perturbation:x", "openai:gpt-4o-mini", [lambda record: record(PROMPT)])
    with pytest.raises(LLMError, match="openai:gpt-4o-mini: refused"):
        complete(PROMPT)


def test_a_prompt_that_was_not_in_the_dry_run_is_a_model_error_too(db, monkeypatch):
    monkeypatch.setattr(rewrites, "rewrite_all", lambda purpose, provider, asked: {})
    complete = stored_completer("perturbation:x", "not a provider", [])
    with pytest.raises(LLMError, match="not prepared in the dry run"):
        complete(PROMPT)


def test_a_stored_answer_is_returned(db, monkeypatch):
    monkeypatch.setattr(rewrites, "rewrite_all", lambda purpose, provider, asked: {messages_key(PROMPT): "Done."})
    complete = stored_completer("perturbation:x", "openai:gpt-4o-mini", [lambda record: record(PROMPT)])
    assert complete(PROMPT) == "Done."
