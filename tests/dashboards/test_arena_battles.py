"""Battles out in LMArena's schema and back in: the same battles, the same ratings."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Benchmark
from evalhub.core.statistics import bradley_terry as bt
from evalhub.reads.battles import SOURCES, Filters, load_battles
from evalhub.reads.caching import fingerprint

pytestmark = pytest.mark.django_db


def arena_record(question: int, a: str, b: str, winner: str, judge: str) -> dict:
    prompt = f"Question {question}?"
    return {
        "question_id": question,
        "model_a": a,
        "model_b": b,
        "winner": winner,
        "judge": judge,
        "turn": 1,
        "conversation_a": [{"role": "user", "content": prompt}, {"role": "assistant", "content": f"{a} on {question}"}],
        "conversation_b": [{"role": "user", "content": prompt}, {"role": "assistant", "content": f"{b} on {question}"}],
        "anony": True,  # Arena's other fields are read past
        "language": "English",
    }


RECORDS = [
    arena_record(q, a, b, winner, judge)
    for q, (a, b, winner, judge) in enumerate(
        [
            ("alpha", "beta", "model_a", "human_1"),
            ("beta", "gamma", "model_b", "human_2"),
            ("alpha", "gamma", "tie (bothbad)", "human_1"),
            ("gamma", "alpha", "model_a", "gpt-4"),
            ("beta", "alpha", "tie", "gpt-4"),
            ("alpha", "beta", "model_a", "gpt-4"),
        ]
        * 4
    )
]


def imported(benchmark: str, records: list[dict]) -> list[tuple]:
    do_import_judgments(
        filename="battles.jsonl",
        data="".join(json.dumps(r) + "\n" for r in records).encode(),
        benchmark_slug=benchmark,
        layout="mt-bench",
        allow_new_models=True,
    )
    everything = Filters(sources=tuple(SOURCES), benchmark=benchmark)
    return sorted(
        (b.model_a, b.model_b, b.outcome, b.judge, b.source)
        for b in load_battles(fingerprint(), True)
        if everything.keep(b)
    )


def test_battles_exported_in_arenas_schema_import_back_as_the_same_battles_and_ratings(tmp_path):
    before = imported("arena-in", RECORDS)
    out = tmp_path / "battles.jsonl"
    call_command("export_battles", "--benchmark", "arena-in", "--out", str(out))
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(exported) == len(RECORDS)
    first = exported[0]
    assert set(first) >= {"question_id", "model_a", "model_b", "winner", "judge", "turn", "conversation_a"}
    ties = {str(r["question_id"]): r["winner"] for r in RECORDS if r["winner"].startswith("tie")}
    assert {r["question_id"]: r["winner"] for r in exported if r["winner"].startswith("tie")} == ties
    assert "tie (bothbad)" in ties.values(), "Arena's tie where neither is good comes back as itself"
    assert first["conversation_a"][0] == {"role": "user", "content": f"Question {first['question_id']}?"}
    assert first["conversation_b"][1]["content"] == f"{first['model_b']} on {first['question_id']}"
    after = imported("arena-back", exported)
    assert after == before, "the same battles, judges and sources"
    ratings = [bt.leaderboard([(a, b, o) for a, b, o, *_ in battles], rounds=0) for battles in (before, after)]
    assert [(r.model, r.rating) for r in ratings[0].ratings] == [(r.model, r.rating) for r in ratings[1].ratings]


def test_the_boards_battles_download_follows_its_filters_and_a_broken_export_file_names_its_line(
    tmp_path, viewer, login
):
    imported("arena-in", RECORDS)
    client = login(viewer)
    body = client.get("/leaderboards/battles.jsonl", {"source": ["imported_people"]}).content.decode()
    rows = [json.loads(line) for line in body.splitlines()]
    assert len(rows) == 12 and {r["judge"] for r in rows} == {"human_1", "human_2"}
    assert "These filters cannot be used" in client.get("/leaderboards/battles.jsonl?source=nope").content.decode()
    from tests.system.test_hf_datasets import opened

    _, as_dataset = opened(client.get("/leaderboards/battles.hf", {"source": ["imported_people"]}).content)
    assert as_dataset == rows, "the same records as a Parquet dataset (conversations as lists of messages)"
    broken = [*rows[:3], {**rows[3], "winner": "model_c"}]
    with pytest.raises(ImportRejected) as refused:
        do_import_judgments(
            filename="broken.jsonl",
            data="".join(json.dumps(r) + "\n" for r in broken).encode(),
            benchmark_slug="broken",
            layout="mt-bench",
            allow_new_models=True,
        )
    assert [(e.line, "model_c" in e.message) for e in refused.value.errors] == [(4, True)]
    assert not Benchmark.objects.filter(slug="broken").exists(), "nothing written"
    with pytest.raises(CommandError, match="no battle matches"):
        call_command("export_battles", "--benchmark", "nothing-here", "--out", str(tmp_path / "x.jsonl"))


def test_the_criterion_of_an_exported_battle_comes_back_with_it():
    from evalhub.catalog.demo import do_load_builtin_criteria

    do_load_builtin_criteria()
    imported("arena-in", [{**record, "criterion": "helpfulness"} for record in RECORDS[:3]])
    criteria = {b.criterion for b in load_battles(fingerprint(), True) if b.benchmark == "arena-in"}
    assert criteria == {"helpfulness"}


def test_a_bothbad_tie_that_a_later_file_calls_a_plain_tie_is_exported_as_the_file_now_says(tmp_path):
    records = RECORDS[:3]
    imported("arena-in", records)
    imported("arena-in", [{**r, "winner": "tie"} if r["winner"] == "tie (bothbad)" else r for r in records])
    out = tmp_path / "battles.jsonl"
    call_command("export_battles", "--benchmark", "arena-in", "--out", str(out))
    assert sorted(json.loads(line)["winner"] for line in out.read_text().splitlines()) == ["model_a", "model_b", "tie"]
