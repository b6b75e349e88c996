"""OpenAI's Responses API (`responses.create`), for the models only it serves (every `-pro` model, the
codex models) and any spec with `?api=responses`; on OpenAI, Azure OpenAI and compatible servers.

What differs from chat completions, as OpenAI's API reference defines it: the turns go in `input`, the
answer's limit is `max_output_tokens` (reasoning included), a reasoning model's effort and summary go in
`reasoning`, there is no seed, and the answer is a list of output items: reasoning items (with a summary
when one is asked) and the message, whose parts are text or a refusal. The status says whether it ended
(`completed`), stopped short (`incomplete`: out of tokens, or the content filter) or failed. Streamed,
typed events (`response.output_text.delta` …) end in `response.completed`, `.incomplete` or `.failed`.

A reasoning summary is kept apart from the answer (`Completion.reasoning_summary`): it is never read as
the verdict. Responses are not stored at OpenAI (`store: false`): evalhub never continues one.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from evalhub.llm.base import Sampling, StreamEnded, UnusableAnswer
from evalhub.llm.types import Completion, Message, RequestRejected

if TYPE_CHECKING:
    from evalhub.llm.providers.openai_chat import OpenAIChat

# A failed response's error codes that may pass when asked again (the rest will fail again).
PASSING_ERRORS = ("server_error", "rate_limit_exceeded", "vector_store_timeout")
# What an incomplete response's reason means as a chat completion's finish_reason, so one check of the
# answer (OpenAIChat.check_usable) serves both APIs.
FINISH_OF_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}


def request(client: OpenAIChat, messages: list[Message], sampling: Sampling) -> dict[str, Any]:
    if sampling.top_logprobs:
        raise RequestRejected(
            client.provider, client.model, "evalhub reads no log-probabilities from the Responses API"
        )
    body: dict[str, Any] = {
        "model": client.model,
        "input": [{"role": message["role"], "content": message["content"]} for message in messages],
        "max_output_tokens": sampling.max_tokens,
        "store": False,
    }
    if client.reasoning:
        settings = {"effort": client.reasoning_effort, "summary": client.reasoning_summary}
        if settings := {name: value for name, value in settings.items() if value}:
            body["reasoning"] = settings
    else:
        body["temperature"] = sampling.temperature
    return body


@dataclass
class _Answer:
    """What a response said, read from its output items (streamed: from the events, then the last one)."""

    text: list[str] = field(default_factory=list)
    refusal: list[str] = field(default_factory=list)
    summary: dict[tuple[Any, Any], str] = field(default_factory=dict)  # (item, part) → its text

    def read_items(self, output: list[dict[str, Any]]) -> None:
        for index, item in enumerate(output):
            if item.get("type") == "reasoning":
                for part, said in enumerate(item.get("summary") or ()):
                    self.summary[index, part] = said.get("text", "")
            elif item.get("type") == "message":
                for said in item.get("content") or ():
                    if said.get("type") == "output_text":
                        self.text.append(said.get("text", ""))
                    elif said.get("type") == "refusal":
                        self.refusal.append(said.get("refusal", ""))

    def summary_text(self) -> str:
        return "\n\n".join(part for _, part in sorted(self.summary.items()) if part)


def _finish(response: dict[str, Any]) -> str:
    """The response's status as a finish reason; a failed response fails the call with its error."""
    status = response.get("status") or ""
    if status == "failed" or response.get("error"):
        error = response.get("error") or {}
        code = str(error.get("code") or "unknown")
        cause = f"the response failed ({code}): {str(error.get('message') or '')[:300]}"
        raise UnusableAnswer(cause, retry=code in PASSING_ERRORS)
    if status == "incomplete":
        reason = str((response.get("incomplete_details") or {}).get("reason") or "")
        return FINISH_OF_INCOMPLETE.get(reason, reason or "incomplete")
    if status in ("cancelled", "queued", "in_progress"):
        raise UnusableAnswer(f"the response ended {status!r}, with no answer", retry=status != "cancelled")
    return "stop"


def _completion(
    client: OpenAIChat, response: dict[str, Any], answer: _Answer, started: float, raw: dict[str, Any]
) -> Completion:
    usage = response.get("usage") or {}
    completion = Completion(
        text="".join(answer.text),
        provider=client.provider,
        model=client.model,
        input_tokens=int(usage.get("input_tokens") or 0),
        output_tokens=int(usage.get("output_tokens") or 0),
        latency_s=time.perf_counter() - started,
        raw=raw,
        reasoning_tokens=int((usage.get("output_tokens_details") or {}).get("reasoning_tokens") or 0),
        reasoning_summary=answer.summary_text(),
    )
    try:
        completion.finish_reason = _finish(response)
        said = answer.text or answer.refusal or any(item.get("type") == "message" for item in response["output"])
        if not said and completion.finish_reason == "stop":  # chat completions' `choices: []`: may pass
            raise UnusableAnswer("the response held no message (an empty answer from the server)", retry=True)
    except UnusableAnswer as unusable:
        unusable.spent = completion  # billed all the same
        raise
    return client.check_usable(completion, "".join(answer.refusal) or None)


async def complete(client: OpenAIChat, body: dict[str, Any]) -> Completion:
    started = time.perf_counter()
    response = (await client.sdk().responses.create(**body)).model_dump(mode="json", exclude_unset=True)
    response.setdefault("output", [])
    answer = _Answer()
    answer.read_items(response["output"])
    return _completion(client, response, answer, started, raw=response)


TERMINAL = ("response.completed", "response.incomplete", "response.failed")


async def stream(client: OpenAIChat, body: dict[str, Any], emit: Callable[[str], None]) -> Completion:
    """Through the SDK's raw streaming surface, as chat completions are (its typed events cost a pydantic
    object each); the text deltas are shown as they come, the final response gives status and usage."""
    started = time.perf_counter()
    answer, final, events = _Answer(), dict[str, Any](), 0
    async with client.sdk().responses.with_streaming_response.create(**body, stream=True) as response:
        async for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            event = json.loads(line[5:])
            events += 1
            kind = event.get("type", "")
            if kind == "response.output_text.delta" and (text := event.get("delta")):
                answer.text.append(text)
                emit(text)
            elif kind == "response.refusal.delta":
                answer.refusal.append(event.get("delta") or "")
            elif kind == "response.reasoning_summary_text.delta":
                part = (event.get("output_index"), event.get("summary_index"))
                answer.summary[part] = answer.summary.get(part, "") + (event.get("delta") or "")
            elif kind == "error":  # the stream's own error event
                code = str(event.get("code") or "unknown")
                cause = f"the response failed ({code}): {str(event.get('message') or '')[:300]}"
                raise UnusableAnswer(cause, retry=code in PASSING_ERRORS)
            elif kind in TERMINAL:
                final = event.get("response") or {}
    if not final:  # the connection closed early: what came is not the whole answer
        raise StreamEnded(events, "response.completed")
    final.setdefault("output", [])
    if not answer.text and not answer.refusal and not answer.summary:  # items sent only at the end
        answer.read_items(final["output"])
    return _completion(client, final, answer, started, raw={"streamed": True, "id": final.get("id", "")})
