"""A benchmark file brings a YESciEval prompt's papers in its `metadata.papers` column, as a JSON list in
JSONL or as JSON text in a CSV cell, and the rubric prompts show them."""

from __future__ import annotations

import io
import json

import pytest

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.models import Prompt
from evalhub.core.yescieval.papers import papers_of

pytestmark = pytest.mark.django_db
PAPERS = [{"title": "Rivers", "abstract": "Rivers carry sediment."}, {"title": "Deltas", "abstract": "Deltas grow."}]


def test_papers_come_in_through_a_jsonl_file_and_a_csv_file_alike():
    row = {"prompt_id": "q1", "prompt": "How do deltas form?", "metadata": {"papers": PAPERS}}
    do_import_benchmark(filename="q.jsonl", data=io.BytesIO(json.dumps(row).encode()), benchmark_slug="sci")
    cell = json.dumps(PAPERS).replace('"', '""')
    text = f'prompt_id,prompt,metadata.papers\r\nq2,Why rivers?,"{cell}"\r\n'
    do_import_benchmark(filename="q.csv", data=io.BytesIO(text.encode()), benchmark_slug="sci")
    for external_id in ("q1", "q2"):
        prompt = Prompt.objects.get(external_id=external_id)
        assert papers_of(prompt.metadata, prompt.source) == {
            "Rivers": "Rivers carry sediment.",
            "Deltas": "Deltas grow.",
        }
