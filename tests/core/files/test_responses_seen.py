"""The responses a labels file names: each checked once, a changed text named by the row that changes it,
whatever the batch a row is settled in or the cache holds; and memory for a file that names new
responses on every row (Arena's votes) that does not keep each one."""

from __future__ import annotations

import io
import itertools
import random
import tracemalloc

import pytest

from evalhub.core.files.judgments import parse_judgment_file
from evalhub.core.files.responses_seen import ResponsesSeen

ROWS = [
    "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner",
    "q1,Why?,m1,m2,one,two,human-1,a",  # line 2
    "q1,,m1,m2,one,two,human-2,b",
    "q2,How?,m2,m3,TWO,three,human-1,a",
    "q1,,m2,m1,two,one!,human-3,a",  # line 5: m1's answer to q1 changed
    "q2,,m3,m1,three,four,human-2,tie",
    "q1,,m1,m3,one,five,human-4,b",
    "q2,,m2,m3,two,three,human-3,b",  # line 8: m2's answer to q2 changed
]


@pytest.mark.parametrize("settled_every", [1, 2, 3, 10_000])
@pytest.mark.parametrize("cache", [1, 2, 1 << 17])
def test_a_changed_response_is_named_by_its_row_whatever_the_batch_or_the_cache(monkeypatch, settled_every, cache):
    monkeypatch.setattr(ResponsesSeen, "SETTLE_BATCH", settled_every)
    monkeypatch.setattr(ResponsesSeen, "CACHE_SIZE", cache)
    parsed = parse_judgment_file(("\n".join(ROWS) + "\n").encode(), "csv", known_models=(), allow_new_models=True)
    assert [str(error) for error in parsed.errors] == [
        "line 5: response_b of 'm1' differs from the one on line 2.",
        "line 8: response_a of 'm2' differs from the one on line 4.",
    ]
    assert sorted((r.prompt_id, r.model, r.text, r.line) for r in parsed.benchmark.responses) == [
        ("q1", "m1", "one", 2),
        ("q1", "m2", "two", 2),
        ("q1", "m3", "five", 7),
        ("q2", "m1", "four", 6),
        ("q2", "m2", "TWO", 4),
        ("q2", "m3", "three", 4),
    ], "each response checked once, as first seen"


def arena_csv(rows: int) -> bytes:
    """Chatbot Arena's shape: every vote a conversation of its own, so two new responses a row."""
    rng = random.Random(0)
    models = [f"m{n}" for n in range(20)]
    out = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    for row in range(rows):
        a, b = rng.sample(models, 2)
        out.append(f"c{row},Conversation {row}?,{a},{b},{a} says {row},{b} says {row},human-{row % 500},a")
    return ("\n".join(out) + "\n").encode()


def test_a_file_of_new_responses_a_row_does_not_keep_each_one(monkeypatch):
    """Each response's first sight (its key and a hash of its text) in a dict cost about 400 bytes, two
    a row, and each prompt id was interned for good: 896 bytes a row; now they wait on disk behind a
    bounded cache. What grows is each row's and each response's key as hashes and each prompt's code."""
    monkeypatch.setattr(ResponsesSeen, "CACHE_SIZE", 1024, raising=False)  # its bound, reached at this size

    def peak(data: bytes) -> int:
        tracemalloc.start()
        try:
            parsed = parse_judgment_file(io.BytesIO(data), "csv", known_models=(), allow_new_models=True)
            assert parsed.ok, parsed.errors[:3]
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    per_row = (peak(arena_csv(40_000)) - peak(arena_csv(10_000))) / 30_000
    assert per_row < 200, f"{per_row:.0f} bytes a row"


CHANGED_WHILE_WAITING = [
    "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner",
    "q1,Why?,m1,m2,one,two,human-1,a",  # line 2
    "q1,,m3,m4,three,four,human-1,a",
    "q1,,m1,m2,ONE,two,human-2,a",  # line 4: m1's answer changed
    "q1,,m1,m3,ONE,three,human-3,a",  # line 5: the same change again
    "q1,,m1,m4,one,four,human-4,a",  # line 6: as first seen
    "q1,,m2,m1,TWO,uno,human-5,a",  # line 7: both changed
]


@pytest.mark.parametrize("settled_every", [1, 2, 3, 10_000])
@pytest.mark.parametrize("cache", [1, 2, 1 << 17])
def test_a_response_named_again_before_it_is_settled_is_compared_with_its_first_sight(
    monkeypatch, settled_every, cache
):
    """A response named again while it waits for the disk, whether its first sight is on disk already or
    is the row that waits; errors in the order of their rows and columns. The code before passed all
    but one: settled every 3 rows behind a cache of 1, line 7's response_b was named before its
    response_a (one was answered by the cache, the other at the settle)."""
    monkeypatch.setattr(ResponsesSeen, "SETTLE_BATCH", settled_every)
    monkeypatch.setattr(ResponsesSeen, "CACHE_SIZE", cache)
    data = ("\n".join(CHANGED_WHILE_WAITING) + "\n").encode()
    parsed = parse_judgment_file(data, "csv", known_models=(), allow_new_models=True)
    assert [str(error) for error in parsed.errors] == [
        "line 4: response_a of 'm1' differs from the one on line 2.",
        "line 5: response_a of 'm1' differs from the one on line 2.",
        "line 7: response_a of 'm2' differs from the one on line 2.",
        "line 7: response_b of 'm1' differs from the one on line 2.",
    ]
    assert sorted((r.model, r.text, r.line) for r in parsed.benchmark.responses) == [
        ("m1", "one", 2),
        ("m2", "two", 2),
        ("m3", "three", 3),
        ("m4", "four", 3),
    ]


def test_a_study_file_settles_each_response_once_not_each_row(monkeypatch):
    """A study's file names each response on many rows in a row (here 20 models' answers to a prompt, on
    every pair of them). The cache learns a response only once it is settled, so each row that named one
    before that waited and was settled on its own: nearly every row of such a file (0.4 of its import's
    CPU at 300,000 rows). A response named again while it waits is looked up at once instead."""
    settled: list[int] = []
    settle = ResponsesSeen._settle

    def counting(self: ResponsesSeen) -> None:
        settled.append(len(self._pending))
        settle(self)

    monkeypatch.setattr(ResponsesSeen, "_settle", counting)
    models = [f"m{n}" for n in range(20)]
    out = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    for prompt in range(30):
        for a, b in itertools.combinations(models, 2):
            out.append(f"q{prompt},Why {prompt}?,{a},{b},{a} on {prompt},{b} on {prompt},human-1,a")
    parsed = parse_judgment_file(("\n".join(out) + "\n").encode(), "csv", known_models=(), allow_new_models=True)
    assert parsed.ok, parsed.errors[:3]
    assert len(out) - 1 == 30 * 190
    assert sum(settled) == 30 * 20, f"{sum(settled)} responses settled for {30 * 20} named"


REFERENCES = [
    '{"prompt_id": "q1", "prompt": "Why?", "model_a": "m1", "model_b": "m2", "judge": "human-1", "winner": "a"}',
    '{"prompt_id": "q1", "model_a": "m1", "model_b": "m2", "response_a": "one", "response_b": "two", '
    '"judge": "human-2", "winner": "b"}',
    '{"prompt_id": "q2", "prompt": "How?", "model_a": "m2", "model_b": "m3", "judge": "human-1", "winner": "a"}',
    '{"prompt_id": "q1", "model_a": "m2", "model_b": "m1", "judge": "human-3", "winner": "a"}',
]


@pytest.mark.parametrize("settled_every", [1, 2, 3, 10_000])
@pytest.mark.parametrize("cache", [1, 1 << 17])
def test_responses_named_by_reference_are_the_files_or_the_benchmarks_whatever_the_batch(
    monkeypatch, settled_every, cache
):
    """A prompt's first row may name its responses by reference and carry the prompt's text; the file
    gives some texts later, the benchmark holds the rest (q2's), and asks about only those."""
    monkeypatch.setattr(ResponsesSeen, "SETTLE_BATCH", settled_every)
    monkeypatch.setattr(ResponsesSeen, "CACHE_SIZE", cache)
    asked: list[tuple[str, str, str]] = []

    def held(keys):
        asked.extend(keys)
        return {key for key in keys if key[0] == "q2"}

    data = ("\n".join(REFERENCES) + "\n").encode()
    parsed = parse_judgment_file(data, "jsonl", known_models=(), allow_new_models=True, held=held)
    assert [str(error) for error in parsed.errors] == []
    assert sorted(asked) == [("q2", "m2", ""), ("q2", "m3", "")]
    assert {p.external_id: p.text for p in parsed.benchmark.prompts} == {"q1": "Why?", "q2": "How?"}
    assert sorted((r.prompt_id, r.model, r.text) for r in parsed.benchmark.responses) == [
        ("q1", "m1", "one"),
        ("q1", "m2", "two"),
    ]
