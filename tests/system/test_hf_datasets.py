"""Exports as Hugging Face datasets: Parquet and a dataset card, read back with pyarrow."""

from __future__ import annotations

import io
import json
import zipfile

import pyarrow.parquet as pq
import pytest

from evalhub.system.hf_datasets import DATA_FILE, dataset_zip

pytestmark = pytest.mark.django_db


def opened(body: bytes) -> tuple[str, list[dict]]:
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        assert sorted(archive.namelist()) == sorted(["README.md", DATA_FILE])
        card = archive.read("README.md").decode()
        rows = pq.read_table(io.BytesIO(archive.read(DATA_FILE))).to_pylist()
    return card, rows


def test_rows_with_nested_conversations_round_trip_and_the_card_names_every_feature():
    rows = [
        {"question_id": "q1", "score": 0.5, "n": 3, "ok": True, "conversation": [{"role": "user", "content": "hi"}]},
        {"question_id": "q2", "score": None, "n": 4, "ok": False, "conversation": []},
    ]
    card, back = opened(dataset_zip(rows, "battles", "a test"))
    assert back == rows
    header = card.split("---")[1]
    for line in (
        '- name: "question_id"\n    dtype: string',
        '- name: "score"\n    dtype: float64',
        '- name: "n"\n    dtype: int64',
        '- name: "ok"\n    dtype: bool',
        '- name: "conversation"\n    list:\n    - name: "role"\n      dtype: string',
        f"path: {DATA_FILE}",
        "num_examples: 2",
        "license: other",
    ):
        assert line in header, line


def test_a_column_of_mixed_kinds_is_kept_as_json_text_not_refused():
    rows = [{"value": {"a": 1}}, {"value": [1, 2]}]
    _, back = opened(dataset_zip(rows, "mixed", "a test"))
    assert [json.loads(row["value"]) for row in back] == [{"a": 1}, [1, 2]]


def test_the_boards_and_the_benchmarks_exports_offer_the_same_rows_as_a_dataset(viewer, login):
    from evalhub.catalog.demo import do_load_demo

    do_load_demo()
    client = login(viewer)
    as_json = client.get("/leaderboards/ratings.json").json()
    card, rows = opened(client.get("/leaderboards/ratings.hf").content)
    assert rows == as_json and "leaderboard-ratings" in card
    response = client.get("/benchmarks/demo/export/responses.hf")
    assert response["Content-Disposition"] == 'attachment; filename="demo.responses.hf.zip"'
    _, responses = opened(response.content)
    lines = client.get("/benchmarks/demo/export/responses.jsonl").content.decode().splitlines()

    def present(row: dict) -> str:  # a column a row lacks is null in Parquet
        return json.dumps({k: v for k, v in row.items() if v is not None}, sort_keys=True)

    assert sorted(map(present, responses)) == sorted(present(json.loads(line)) for line in lines)
    _, judges = opened(client.get("/judges/report.hf").content)
    assert all("kappa" in judge for judge in judges)


def test_a_column_the_first_row_lacks_is_kept():
    _, back = opened(dataset_zip([{"a": 1}, {"a": 2, "reference": "kept"}], "later", "a test"))
    assert back == [{"a": 1, "reference": None}, {"a": 2, "reference": "kept"}]
