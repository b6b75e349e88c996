"""The responses a labels file names: each checked once, a changed text named by the row that changes it,
whatever the batch a row is settled in or the cache holds; and memory for a file that names new
responses on every row (Arena's votes) that does not keep each one."""

from __future__ import annotations

import io
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
