"""A loopback server that speaks OpenAI's and Anthropic's wire protocols, for tests and benchmarks.

It answers chat completions and the Responses API (JSON and SSE streams), Anthropic messages (JSON and SSE), and
legacy completions with prompt log-probabilities (vLLM's echo mode). Failures can be
scripted per call; every request is counted. Nothing here touches the network beyond
127.0.0.1.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self


@dataclass
class Fail:
    """Answer one call with an HTTP error (optionally with Retry-After)."""

    status: int
    retry_after: str | None = None
    message: str = "scripted failure"


@dataclass
class Stall:
    """Answer one call only after `seconds` (to trigger client timeouts)."""

    seconds: float


@dataclass
class Drop:
    """Start streaming one answer, then drop the connection after `events` events (a provider
    that dies mid-answer); an unstreamed call gets its connection dropped with no answer."""

    events: int = 0


@dataclass
class Unusable:
    """Answer one call with a 200 that holds no answer: `no-choices` (an empty `choices`), `refusal`
    (the content empty and a refusal given; Anthropic: stop_reason "refusal"), `content-filter` (a
    content-filter stop), `empty` (no text), or `empty-body` (a 200 with no body at all: no JSON, or a
    stream with no event, as a proxy in the way may send), streamed or not, on every route; on the
    Responses API's, also `failed` (status "failed", error code server_error); on a streamed chat
    completion, also `stream-error` (an error event in place of the answer)."""

    kind: str
    refusal: str = "I can't help with that."


class _Dropped(Exception):
    pass


# OpenAI's reasoning models, as its API treats them ("Reasoning models" guide): max_tokens, a temperature
# other than the default 1 and log-probabilities are refused with a 400 naming the parameter.
REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5", "gpt-6", "codex")
O_SERIES_EFFORTS = ("low", "medium", "high")  # what o3 and o4-mini take ("Reasoning models" guide)
REASONING_TOKENS = 7  # what a reasoning model reports it spent reasoning on every answer here


def _reasoning_rule_broken(body: dict[str, Any]) -> tuple[str, str, str] | None:
    """(param, code, message) of the first parameter a reasoning model refuses, or None."""
    if "max_tokens" in body:
        message = (
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead."
        )
        return "max_tokens", "unsupported_parameter", message
    if body.get("temperature", 1) != 1:
        message = (
            f"Unsupported value: 'temperature' does not support {body['temperature']} with this model. "
            "Only the default (1) value is supported."
        )
        return "temperature", "unsupported_value", message
    for param in ("logprobs", "top_logprobs"):
        if body.get(param):
            return param, "unsupported_parameter", f"Unsupported parameter: '{param}' is not supported with this model."
    effort = body.get("reasoning_effort")
    if str(body.get("model", "")).startswith("o") and effort not in (None, *O_SERIES_EFFORTS):
        message = (
            f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model. "
            "Supported values are: 'low', 'medium', and 'high'."
        )
        return "reasoning_effort", "unsupported_value", message
    return None


# Served only by the Responses API (OpenAI's model pages): chat completions answers them with a 404.
RESPONSES_ONLY = re.compile(r"(?:^|-)(?:pro|codex|deep-research)(?:-|$)|^codex|^computer-use")
# What `responses.create` takes (OpenAI's API reference), of what a judge could send: anything else, chat
# completions' `messages`, `max_tokens`, `max_completion_tokens`, `reasoning_effort` or `seed` among
# them, is refused by name.
RESPONSES_PARAMETERS = {
    "model", "input", "instructions", "max_output_tokens", "reasoning", "temperature", "top_p", "stream",
    "store", "include", "top_logprobs", "metadata", "service_tier", "text", "truncation", "user",
}  # fmt: skip
FAILED_ERROR = {"code": "server_error", "message": "The model failed to generate a response."}
SUMMARY_TEXT = "Compared both answers against the question."  # a reasoning summary, when one is asked


def _responses_rule_broken(body: dict[str, Any], reasoning: bool) -> tuple[str, str, str] | None:
    """(param, code, message) of the first thing the Responses API refuses in `body`, or None."""
    for param in body:
        if param not in RESPONSES_PARAMETERS:
            return param, "unknown_parameter", f"Unknown parameter: '{param}'."
    if not isinstance(body.get("input"), (str, list)):
        return "input", "missing_required_parameter", "Missing required parameter: 'input'."
    if reasoning and "temperature" in body:
        return (
            "temperature",
            "unsupported_parameter",
            "Unsupported parameter: 'temperature' is not supported with this model.",
        )
    settings = body.get("reasoning") or {}
    if not reasoning and settings:
        return (
            "reasoning.effort",
            "unsupported_parameter",
            "Unsupported parameter: 'reasoning.effort' is not supported with this model.",
        )
    effort = settings.get("effort")
    if str(body.get("model", "")).startswith("o") and effort not in (None, *O_SERIES_EFFORTS):
        message = f"Unsupported value: 'reasoning.effort' does not support '{effort}' with this model."
        return "reasoning.effort", "unsupported_value", message
    if settings.get("summary") not in (None, "auto", "concise", "detailed"):
        return "reasoning.summary", "invalid_value", f"Invalid value: '{settings['summary']}'."
    return None


def _anthropic_rule_broken(body: dict[str, Any]) -> str | None:
    """What Anthropic's Messages API refuses about extended thinking and effort ("Extended thinking":
    a budget of at least 1,024 below max_tokens, no temperature but 1 while thinking), or None."""
    thinking = body.get("thinking") or {}
    if thinking.get("type") == "enabled":
        budget = thinking.get("budget_tokens", 0)
        if budget < 1024:
            return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
        if budget >= body.get("max_tokens", 0):
            return "`max_tokens` must be greater than `thinking.budget_tokens`."
    if thinking.get("type") in ("enabled", "adaptive") and body.get("temperature", 1) != 1:
        return "`temperature` may only be set to 1 when thinking is enabled."
    effort = (body.get("output_config") or {}).get("effort")
    if effort is not None and effort not in ("low", "medium", "high", "xhigh", "max"):
        return f"output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max', not {effort!r}"
    return None


def openai_limit_headers(budget: str, limit: int, remaining: int, reset: str) -> dict[str, str]:
    """OpenAI's x-ratelimit-* headers for one budget ("requests" or "tokens")."""
    return {
        f"x-ratelimit-limit-{budget}": str(limit),
        f"x-ratelimit-remaining-{budget}": str(remaining),
        f"x-ratelimit-reset-{budget}": reset,
    }


@dataclass
class FakeServerState:
    reply: Callable[[list[dict[str, Any]]], str] = lambda messages: "ok"
    reply_for_model: Callable[[str, list[dict[str, Any]]], str] | None = None  # (model, messages) → text
    api_key: str = "test-key"
    latency_s: float = 0.0
    chunk_delay_s: float = 0.0
    script: deque[Any] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    prompt_logprobs: Callable[[str], list[tuple[str, float]]] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    open_connections: int = 0
    peak_connections: int = 0
    chunk_log: list[tuple[str, float]] | None = None  # (chunk, time sent) when given a list
    keep_alive: bool = False  # stream chunked on connections that stay open, or close each after its stream
    connections_opened: int = 0
    honour_max_tokens: bool = False  # cut answers at max_tokens words with finish_reason "length", like a server
    # A provider's declared limits, `rate_limit` calls and `token_limit` tokens per `rate_window_s`,
    # kept as providers document theirs: buckets that hold one window's worth and refill steadily.
    # A call that finds a bucket empty gets a 429 with Retry-After (the benchmarks of shared limits
    # count them); every answer carries OpenAI's x-ratelimit-* headers. None: no limit.
    rate_limit: int | None = None
    token_limit: int | None = None
    rate_window_s: float = 60.0
    buckets: dict[str, tuple[float, float]] = field(default_factory=dict)  # budget → (level, when)
    arrivals: list[float] = field(default_factory=list)
    token_log: list[tuple[float, int]] = field(default_factory=list)  # (arrival, tokens it used)
    rate_limited: int = 0
    limit_headers: bool = True  # False: limits enforced without a word, as many self-hosted proxies do
    response_headers: dict[str, str] = field(default_factory=dict)  # sent with every answer
    reasoning_rules: bool = True  # models named like OpenAI's reasoning models follow its rules for them
    # Asked for log-probabilities, a token of the answer (whitespace joined to the word after it) gets
    # log 1 and itself as its only alternative, except a verdict digit alone: its alternatives are
    # these (digit → probability), e.g. {"1": 0.7, "2": 0.2, "0": 0.1}.
    verdict_probabilities: dict[str, float] = field(default_factory=lambda: {"1": 0.7, "2": 0.2, "0": 0.1})


class _Server(ThreadingHTTPServer):
    request_queue_size = 1024  # the default backlog (5) refuses bursts of concurrent clients


class _LoopbackServer:
    """A threaded HTTP server on a free loopback port, served while in its `with` block."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


class FakeLLMServer(_LoopbackServer):
    """Start with `with FakeLLMServer() as server:`; `server.url` is http://127.0.0.1:PORT."""

    def __init__(self, **state: Any) -> None:
        self.state = FakeServerState(**state)
        super().__init__(type("Handler", (_Handler,), {"state": self.state}))

    @property
    def request_count(self) -> int:
        return len(self.state.requests)

    def fail_next(self, *outcomes: Fail | Stall | Drop | Unusable) -> None:
        self.state.script.extend(outcomes)


class _Handler(BaseHTTPRequestHandler):
    state: FakeServerState
    protocol_version = "HTTP/1.1"
    events_left: int | None = None  # events this call may still send before a scripted Drop
    arrival = 0.0  # when the call being answered arrived

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass

    def setup(self) -> None:
        super().setup()
        with self.state.lock:
            self.state.open_connections += 1
            self.state.connections_opened += 1
            self.state.peak_connections = max(self.state.peak_connections, self.state.open_connections)

    def finish(self) -> None:
        with self.state.lock:
            self.state.open_connections -= 1
        super().finish()

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        self.events_left = None  # a kept-alive connection serves several calls: no Drop carries over
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        path = self.path.split("?", 1)[0].rstrip("/")  # Azure's calls carry ?api-version=
        anthropic = path.endswith("/messages")
        with self.state.lock:
            self.state.requests.append({"path": self.path, "body": body, "headers": dict(self.headers)})
            outcome = self.state.script.popleft() if self.state.script else None
            now = time.time()
            if outcome is None and (wait := self._over_limit(now)) is not None:
                self.state.rate_limited += 1
                outcome = Fail(429, retry_after=str(max(1, round(wait))), message="rate limit exceeded")
            if outcome is None:
                self.state.arrivals.append(now)
            self.arrival = now
        bearer = self.headers.get("authorization", "").removeprefix("Bearer ")
        # Anthropic's Messages API reads its key from x-api-key (its API reference), not a bearer token;
        # Azure OpenAI from api-key; OpenAI and compatible servers from the bearer token.
        key = self.headers.get("x-api-key", "") if anthropic else (self.headers.get("api-key") or bearer)
        if key != self.state.api_key:
            return self._error(Fail(401, message="invalid api key"), anthropic)
        if isinstance(outcome, Stall):
            time.sleep(outcome.seconds)
        elif isinstance(outcome, Fail):
            return self._error(outcome, anthropic)
        if self.state.latency_s:
            time.sleep(self.state.latency_s)
        self.events_left = outcome.events if isinstance(outcome, Drop) else None
        if isinstance(outcome, Unusable) and outcome.kind == "empty-body":
            return self._empty_body(streamed=bool(body.get("stream")))
        try:
            if path.endswith("/chat/completions"):
                return self._openai_chat(body, outcome if isinstance(outcome, Unusable) else None)
            if path.endswith("/responses"):
                return self._openai_responses(body, outcome if isinstance(outcome, Unusable) else None)
            if anthropic:
                return self._anthropic(body, outcome if isinstance(outcome, Unusable) else None)
            if path.endswith("/completions"):
                return self._completions(body)
            return self._json(404, {"error": {"message": f"no route {self.path}"}})
        except _Dropped:
            self.close_connection = True  # the answer ends unfinished (or, unstreamed, never starts)
            return None

    def _limits(self) -> dict[str, int]:
        limits = {"requests": self.state.rate_limit, "tokens": self.state.token_limit}
        return {budget: limit for budget, limit in limits.items() if limit is not None}

    def _level(self, budget: str, now: float, spend: float = 0.0) -> float:
        """What a budget's bucket holds now (full at first, refilled at limit / window a second),
        less `spend`; call with the state's lock held."""
        limit = self._limits()[budget]
        level, when = self.state.buckets.get(budget, (float(limit), now))
        level = min(float(limit), level + (now - when) * limit / self.state.rate_window_s) - spend
        self.state.buckets[budget] = (level, now)
        return level

    def _over_limit(self, now: float) -> float | None:
        """Seconds until a call fits the declared limits again (None: it fits, and a request is
        taken); call with the state's lock held. Tokens are taken once the answer says how many."""
        waits = []
        for budget, limit in self._limits().items():
            level, seconds_per_unit = self._level(budget, now), self.state.rate_window_s / limit
            if budget == "requests" and level < 1.0:  # a request needs a whole one left
                waits.append((1.0 - level) * seconds_per_unit)
            elif budget == "tokens" and level <= 0.0:  # tokens, any left at all
                waits.append(-level * seconds_per_unit)
        if waits:
            return max(waits)
        if "requests" in self._limits():
            self._level("requests", now, spend=1.0)
        return None

    def _limit_headers(self) -> dict[str, str]:
        """OpenAI's x-ratelimit-* headers for the declared limits: what is left, and when the
        bucket is full again."""
        headers = dict(self.state.response_headers)
        now = time.time()
        with self.state.lock:
            for budget, limit in self._limits().items() if self.state.limit_headers else ():
                level = self._level(budget, now)
                reset = (limit - level) * self.state.rate_window_s / limit
                headers.update(openai_limit_headers(budget, limit, max(0, int(level)), f"{reset:.3f}s"))
        return headers

    # --- responses ---------------------------------------------------------------------

    def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        if self.events_left is not None:  # a scripted Drop: an unstreamed answer has no events to send first
            raise _Dropped
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in {**self._limit_headers(), **(headers or {})}.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, fail: Fail, anthropic: bool) -> None:
        headers = {"retry-after": fail.retry_after} if fail.retry_after is not None else {}
        if anthropic:
            payload = {"type": "error", "error": {"type": "api_error", "message": fail.message}}
        else:
            payload = {"error": {"message": fail.message, "type": "api_error", "code": str(fail.status)}}
        self._json(fail.status, payload, headers)

    def _empty_body(self, streamed: bool) -> None:
        if streamed:
            self._start_stream()
            return self._end_stream()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "0")
        self.end_headers()
        return None

    def _start_stream(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        for name, value in self._limit_headers().items():
            self.send_header(name, value)
        if self.state.keep_alive:  # chunked, and the connection serves the next call
            self.send_header("transfer-encoding", "chunked")
        else:  # the body ends when the connection does
            self.send_header("connection", "close")
            self.close_connection = True
        self.end_headers()

    def _event(self, data: dict[str, Any] | str, event: str | None = None) -> None:
        if self.events_left is not None:
            if self.events_left == 0:
                raise _Dropped
            self.events_left -= 1
        text = data if isinstance(data, str) else json.dumps(data)
        payload = ((f"event: {event}\n" if event else "") + f"data: {text}\n\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload) if self.state.keep_alive else payload)
        self.wfile.flush()

    def _end_stream(self) -> None:
        if self.state.keep_alive:
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

    def _chunks(self, text: str) -> list[str]:
        words = text.split(" ")
        return [word + (" " if index < len(words) - 1 else "") for index, word in enumerate(words)]

    def _usage(self, body: dict[str, Any], text: str) -> tuple[int, int]:
        """A word is a token here; what a call used counts against the token limit from its arrival."""
        prompt_words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
        with self.state.lock:
            self.state.token_log.append((self.arrival, prompt_words + len(text.split())))
            if self.state.token_limit is not None:
                self._level("tokens", time.time(), spend=prompt_words + len(text.split()))
        return prompt_words, len(text.split())

    def _reply(self, body: dict[str, Any]) -> str:
        if self.state.reply_for_model is not None:
            return self.state.reply_for_model(body.get("model", ""), body.get("messages", []))
        return self.state.reply(body.get("messages", []))

    def _openai_chat(self, body: dict[str, Any], unusable: Unusable | None = None) -> None:
        if self.state.reasoning_rules and RESPONSES_ONLY.search(str(body.get("model", ""))):
            message = "This model is only supported in v1/responses and not in v1/chat/completions."
            return self._json(404, {"error": {"message": message, "type": "invalid_request_error", "param": "model"}})
        reasoning = self.state.reasoning_rules and str(body.get("model", "")).startswith(REASONING_PREFIXES)
        if reasoning and (broken := _reasoning_rule_broken(body)):
            param, code, message = broken
            error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
            return self._json(400, {"error": error})
        text, finish = self._reply(body), "stop"
        limit = body.get("max_completion_tokens") if reasoning else body.get("max_tokens")
        if self.state.honour_max_tokens and limit and len(text.split()) > limit:
            text, finish = " ".join(text.split()[:limit]), "length"
        refusal = None
        if unusable is not None:
            text, finish = "", "content_filter" if unusable.kind == "content-filter" else "stop"
            refusal = unusable.refusal if unusable.kind == "refusal" else None
        prompt_tokens, completion_tokens = self._usage(body, text)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens + (REASONING_TOKENS if reasoning else 0),
            "total_tokens": prompt_tokens + completion_tokens + (REASONING_TOKENS if reasoning else 0),
        }
        if reasoning:
            usage["completion_tokens_details"] = {"reasoning_tokens": REASONING_TOKENS}
        base = {"id": "chatcmpl-fake", "created": int(time.time()), "model": body.get("model", "")}
        no_choices = unusable is not None and unusable.kind == "no-choices"
        if not body.get("stream"):
            answer: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": refusal}
            choice: dict[str, Any] = {"index": 0, "message": answer, "finish_reason": finish}
            if body.get("logprobs"):
                choice["logprobs"] = {"content": self._token_logprobs(text, int(body.get("top_logprobs") or 0))}
            choices = [] if no_choices else [choice]
            return self._json(200, {**base, "object": "chat.completion", "choices": choices, "usage": usage})
        self._start_stream()
        if unusable is not None and unusable.kind == "stream-error":  # as OpenAI sends a failure mid-stream
            self._event(
                {"error": {"message": "The server had an error while processing your request.", "type": "server_error"}}
            )
            return self._end_stream()
        for piece in [] if no_choices else self._chunks(text) if text else []:
            if self.state.chunk_delay_s:
                time.sleep(self.state.chunk_delay_s)
            delta = {"index": 0, "delta": {"content": piece}, "finish_reason": None}
            if self.state.chunk_log is not None:
                self.state.chunk_log.append((piece.strip(), time.time()))
            self._event({**base, "object": "chat.completion.chunk", "choices": [delta]})
        if refusal:
            delta = {"index": 0, "delta": {"refusal": refusal}, "finish_reason": None}
            self._event({**base, "object": "chat.completion.chunk", "choices": [delta]})
        if not no_choices:
            done = {"index": 0, "delta": {}, "finish_reason": finish}
            self._event({**base, "object": "chat.completion.chunk", "choices": [done]})
        self._event({**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        self._event("[DONE]")
        self._end_stream()

    def _openai_responses(self, body: dict[str, Any], unusable: Unusable | None = None) -> None:
        """OpenAI's Responses API (`POST /v1/responses`): the answer as output items (a reasoning item with
        its summary when one is asked, then the message), status and incomplete_details, usage with
        output_tokens_details; streamed as typed events ending in response.completed or .incomplete."""
        model = str(body.get("model", ""))
        reasoning = self.state.reasoning_rules and model.startswith(REASONING_PREFIXES)
        if self.state.reasoning_rules and (broken := _responses_rule_broken(body, reasoning)):
            param, code, message = broken
            return self._json(
                400, {"error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}}
            )
        messages = body["input"] if isinstance(body["input"], list) else [{"role": "user", "content": body["input"]}]
        text = self._reply({"model": model, "messages": messages})
        status, incomplete, refusal = "completed", None, None
        # max_output_tokens counts a reasoning model's reasoning too: what is left of it is the answer's.
        limit = body.get("max_output_tokens")
        left = limit - (REASONING_TOKENS if reasoning else 0) if limit else None
        if self.state.honour_max_tokens and left is not None and len(text.split()) > left:
            text, status, incomplete = (
                " ".join(text.split()[: max(left, 0)]),
                "incomplete",
                {"reason": "max_output_tokens"},
            )
        if unusable is not None:
            text = ""
            refusal = unusable.refusal if unusable.kind == "refusal" else None
            if unusable.kind == "content-filter":
                status, incomplete = "incomplete", {"reason": "content_filter"}
            if unusable.kind == "failed":  # the Responses API's own failure: status "failed" with its error
                status = "failed"
        input_tokens, output_tokens = self._usage({"messages": messages}, text)
        spent = REASONING_TOKENS if reasoning else 0
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": output_tokens + spent,
            "output_tokens_details": {"reasoning_tokens": spent},
            "total_tokens": input_tokens + output_tokens + spent,
        }
        summary = (body.get("reasoning") or {}).get("summary")
        output: list[dict[str, Any]] = []
        if reasoning:
            parts = [{"type": "summary_text", "text": SUMMARY_TEXT}] if summary else []
            output.append({"type": "reasoning", "id": "rs_fake", "summary": parts})
        content: list[dict[str, Any]] = (
            [{"type": "refusal", "refusal": refusal}]
            if refusal
            else [{"type": "output_text", "text": text, "annotations": []}]
        )
        if not (unusable is not None and unusable.kind == "no-choices"):
            output.append(
                {"type": "message", "id": "msg_fake", "status": "completed", "role": "assistant", "content": content}
            )
        response = {
            "id": "resp_fake", "object": "response", "created_at": int(time.time()), "model": model,
            "status": status, "incomplete_details": incomplete, "output": output, "usage": usage,
            "error": FAILED_ERROR if status == "failed" else None,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        }  # fmt: skip
        if not body.get("stream"):
            return self._json(200, response)
        self._start_stream()
        sequence = iter(range(1_000_000))

        def event(kind: str, **fields: Any) -> None:
            self._event({"type": kind, "sequence_number": next(sequence), **fields}, kind)

        started = {**response, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
        event("response.created", response=started)
        for index, item in enumerate(output):
            event("response.output_item.added", output_index=index, item={**item, "summary": [], "content": []})
            for part in item.get("summary", ()):
                event(
                    "response.reasoning_summary_text.delta",
                    item_id=item["id"],
                    output_index=index,
                    summary_index=0,
                    delta=part["text"],
                )
            for part in item.get("content", ()):
                if part["type"] == "refusal":
                    event(
                        "response.refusal.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=0,
                        delta=part["refusal"],
                    )
                    continue
                for piece in self._chunks(part["text"]) if part["text"] else []:
                    if self.state.chunk_delay_s:
                        time.sleep(self.state.chunk_delay_s)
                    event(
                        "response.output_text.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=0,
                        delta=piece,
                        logprobs=[],
                    )
                event(
                    "response.output_text.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=0,
                    text=part["text"],
                    logprobs=[],
                )
            event("response.output_item.done", output_index=index, item=item)
        event(
            {"incomplete": "response.incomplete", "failed": "response.failed"}.get(status, "response.completed"),
            response=response,
        )
        self._end_stream()

    def _token_logprobs(self, text: str, top: int) -> list[dict[str, Any]]:
        import math
        import re

        out = []
        for token in re.findall(r"\s*\S+", text):
            if token.strip() in self.state.verdict_probabilities:
                prefix = token[: len(token) - len(token.lstrip())]
                ranked = sorted(self.state.verdict_probabilities.items(), key=lambda item: -item[1])[: max(top, 1)]
                alternatives = [{"token": prefix + digit, "logprob": math.log(p), "bytes": None} for digit, p in ranked]
                own = math.log(self.state.verdict_probabilities[token.strip()])
            else:
                alternatives, own = [{"token": token, "logprob": 0.0, "bytes": None}], 0.0
            out.append({"token": token, "logprob": own, "bytes": None, "top_logprobs": alternatives})
        return out

    def _anthropic(self, body: dict[str, Any], unusable: Unusable | None = None) -> None:
        """Anthropic's Messages API; `unusable`: a `refusal` (stop_reason "refusal", the text said before
        it kept, as the API keeps it) or `empty` (no text, stop_reason "end_turn")."""
        if broken := _anthropic_rule_broken(body):
            error = {"type": "error", "error": {"type": "invalid_request_error", "message": broken}}
            return self._json(400, error)
        text, stop = self._reply(body), "end_turn"
        if unusable is not None:
            text = unusable.refusal[:12] if unusable.kind == "refusal" else ""
            stop = "refusal" if unusable.kind == "refusal" else "end_turn"
        input_tokens, output_tokens = self._usage(body, text)
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", ""),
            "stop_reason": stop,
            "stop_sequence": None,
        }
        if not body.get("stream"):
            content = [{"type": "text", "text": text}]
            if body.get("thinking", {}).get("type") in ("enabled", "adaptive"):  # thinking comes first
                content.insert(0, {"type": "thinking", "thinking": "Weighing 1 against 2.", "signature": "sig"})
            usage = {"input_tokens": input_tokens, "output_tokens": output_tokens}
            return self._json(200, {**message, "content": content, "usage": usage})
        self._start_stream()
        start = {
            **message,
            "content": [],
            "stop_reason": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1},
        }
        self._event({"type": "message_start", "message": start}, "message_start")
        block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        self._event(block, "content_block_start")
        for piece in self._chunks(text):
            if self.state.chunk_delay_s:
                time.sleep(self.state.chunk_delay_s)
            delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
            self._event(delta, "content_block_delta")
        self._event({"type": "content_block_stop", "index": 0}, "content_block_stop")
        end = {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        }
        self._event(end, "message_delta")
        self._event({"type": "message_stop"}, "message_stop")
        self._end_stream()

    def _completions(self, body: dict[str, Any]) -> None:
        """Legacy completions with echo: per-token log-probabilities of the prompt itself."""
        prompt = body.get("prompt", "")
        if self.state.prompt_logprobs is None:
            return self._json(400, {"error": {"message": "this fake server has no prompt_logprobs function"}})
        tokens = self.state.prompt_logprobs(prompt)
        offsets, position = [], 0
        for token, _ in tokens:
            offsets.append(position)
            position += len(token)
        logprobs = {
            "tokens": [token for token, _ in tokens],
            "token_logprobs": [None] + [value for _, value in tokens[1:]],
            "text_offset": offsets,
            "top_logprobs": None,
        }
        choice = {"index": 0, "text": prompt, "logprobs": logprobs, "finish_reason": "length"}
        self._json(
            200,
            {
                "id": "cmpl-fake",
                "object": "text_completion",
                "created": 0,
                "model": body.get("model", ""),
                "choices": [choice],
                "usage": {"prompt_tokens": len(tokens), "completion_tokens": 0, "total_tokens": len(tokens)},
            },
        )


class ForwardingProxy(_LoopbackServer):
    """A plain HTTP forward proxy on loopback (`with ForwardingProxy() as proxy:`, `proxy.url`): it
    takes requests for absolute URLs, as clients send them to a proxy, forwards each and records its
    URL in `proxy.seen`. For testing that a client honours HTTP_PROXY / HTTPS_PROXY."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                import http.client
                from urllib.parse import urlsplit

                seen.append(self.path)
                target = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection", "host")}
                upstream = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
                upstream.request("POST", target.path + (f"?{target.query}" if target.query else ""), body, headers)
                answer = upstream.getresponse()
                data = answer.read()  # a stream arrives whole: enough to show the call went this way
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

        super().__init__(Handler)


def _stats_get(self: _Handler) -> None:
    """GET /stats: requests served, peak open connections, the chunk log and the CPU seconds this
    process has used (benchmarks subtract two readings), as JSON."""
    if self.path != "/stats":
        self._json(404, {"error": {"message": "not found"}})
        return
    with self.state.lock:
        payload = {
            "requests": len(self.state.requests),
            "peak_connections": self.state.peak_connections,
            "connections_opened": self.state.connections_opened,
            "chunk_log": list(self.state.chunk_log or []),
            "arrivals": list(self.state.arrivals),
            "token_log": list(self.state.token_log),
            "rate_limited": self.state.rate_limited,
            "cpu_s": time.process_time(),
        }
    self._json(200, payload)


_Handler.do_GET = _stats_get  # type: ignore[attr-defined]  # noqa: N815 (http.server's naming; added after the class)


def debate_bench_reply(words_per_answer: int) -> Callable[[str, list[dict[str, Any]]], str]:
    """Agents that disagree by model name (judge-1 says 2, the others 1), with numbered words; a model
    named dhp-… answers a score, yesci-… a YESciEval rating in JSON, writer-… numbered words only."""
    counter = iter(range(10**9))
    lock = threading.Lock()

    def reply(model: str, messages: list[dict[str, Any]]) -> str:
        with lock:
            words = " ".join(f"w{next(counter)}" for _ in range(words_per_answer))
        if model.startswith("dhp-"):
            return str(2 + len(str(messages[-1].get("content", ""))) % 4)  # 2 to 5, by what it rated
        if model.startswith("yesci-"):
            return json.dumps({"rating": 4, "rationale": words})
        if model.startswith("writer-"):
            return words
        return f"{words}\n{'2' if model == 'judge-1' else '1'}"

    return reply


class ServerProcess:
    """The fake provider in a process of its own, as a real one would be (no shared GIL)."""

    def __init__(self, latency: float, chunk_delay: float, words: int, keep_alive: bool) -> None:
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evalhub.llm.testing",
                "--latency",
                str(latency),
                "--chunk-delay",
                str(chunk_delay),
                "--words",
                str(words),
                *(["--keep-alive"] if keep_alive else []),
            ],
            cwd=Path(__file__).resolve().parents[2],  # where `evalhub` imports from
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()

    def stats(self) -> dict[str, Any]:
        import httpx

        answer: dict[str, Any] = httpx.get(f"{self.url}/stats", timeout=30).json()
        return answer

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def main() -> None:
    """Serve in a process of its own (benchmarks): prints the URL, then serves until killed."""
    import argparse

    parser = argparse.ArgumentParser(description="A fake OpenAI/Anthropic server on 127.0.0.1.")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--chunk-delay", type=float, default=0.0)
    parser.add_argument("--words", type=int, default=20)
    parser.add_argument("--api-key", default="not-needed")
    parser.add_argument("--keep-alive", action="store_true", help="stream chunked on connections that stay open")
    parser.add_argument("--rate-limit", type=int, default=None, help="calls allowed in any --rate-window seconds")
    parser.add_argument("--token-limit", type=int, default=None, help="tokens allowed in any --rate-window seconds")
    parser.add_argument("--rate-window", type=float, default=60.0)
    parser.add_argument("--no-limit-headers", action="store_true", help="enforce the limits without x-ratelimit-*")
    args = parser.parse_args()
    server = FakeLLMServer(
        reply_for_model=debate_bench_reply(args.words),
        api_key=args.api_key,
        latency_s=args.latency,
        chunk_delay_s=args.chunk_delay,
        chunk_log=[],
        keep_alive=args.keep_alive,
        rate_limit=args.rate_limit,
        token_limit=args.token_limit,
        limit_headers=not args.no_limit_headers,
        rate_window_s=args.rate_window,
    )
    print(server.url, flush=True)
    server.httpd.serve_forever()


if __name__ == "__main__":
    main()


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released): a refused connection."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port
