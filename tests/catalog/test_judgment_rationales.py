"""A verdict's reason, as a published judge study ships it (a judge's explanation, an annotator's note):
read from the generic layout's `rationale` column, kept, updated when a file changes it, shown beside
the verdict on the prompt page and exported; on SQLite and on PostgreSQL, whose server merges a
re-import."""

from __future__ import annotations

import csv
import io

import pytest

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Judgment, Prompt

pytestmark = pytest.mark.django_db

HEADER = "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner,rationale\r\n"
ROWS = (
    'q1,Is 221 prime?,gpt-4o,llama-3,No: 13 x 17.,Yes.,human-ana,a,"A factors 221, so it is right."\r\n'
    "q1,,gpt-4o,llama-3,No: 13 x 17.,Yes.,judge-x,a,Response A shows the factors.\r\n"
    "q2,Name a prime above 100.,gpt-4o,llama-3,101,100,judge-x,a,\r\n"
)


def reasons() -> dict[tuple[str, str], str]:
    return {
        (j.response.prompt.external_id, j.judge_model.slug): j.rationale
        for j in Judgment.objects.select_related("response__prompt", "judge_model")
    }


def test_a_verdicts_reason_is_kept_updated_in_place_and_shown_and_exported(login, viewer):
    do_import_judgments(filename="l.csv", data=(HEADER + ROWS).encode(), benchmark_slug="study", allow_new_models=True)
    assert reasons() == {
        ("q1", "human-ana"): "A factors 221, so it is right.",
        ("q1", "judge-x"): "Response A shows the factors.",
        ("q2", "judge-x"): "",
    }
    ids = set(Judgment.objects.values_list("pk", flat=True))
    edited = ROWS.replace("Response A shows the factors.", "A lists 13 and 17.")
    summary = do_import_judgments(filename="l.csv", data=(HEADER + edited).encode(), benchmark_slug="study")
    assert (summary.counts["judgments_replaced"], summary.counts["judgments_unchanged"]) == (1, 2)
    assert set(Judgment.objects.values_list("pk", flat=True)) == ids, "updated in place"
    assert reasons()[("q1", "judge-x")] == "A lists 13 and 17."
    again = do_import_judgments(filename="l.csv", data=(HEADER + edited).encode(), benchmark_slug="study")
    assert again.counts["judgments_unchanged"] == 3
    client = login(viewer)
    prompt = Prompt.objects.get(external_id="q1")
    page = client.get(f"/benchmarks/study/prompts/{prompt.pk}/").content.decode()
    assert "A lists 13 and 17." in page and "A factors 221, so it is right." in page
    rows = list(csv.DictReader(io.StringIO(client.get("/benchmarks/study/export/judgments.csv").content.decode())))
    assert {row["rationale"] for row in rows} == {"A factors 221, so it is right.", "A lists 13 and 17.", ""}


def test_a_reason_that_is_not_text_names_its_line():
    from evalhub.catalog.actions.importing import ImportRejected

    data = b'[{"prompt_id": "q1", "prompt": "Q?", "model_a": "m1", "model_b": "m2", "response_a": "A", '
    data += b'"response_b": "B", "judge": "judge-x", "winner": "a", "rationale": 3}]'
    with pytest.raises(ImportRejected) as refused:
        do_import_judgments(filename="l.json", data=data, benchmark_slug="study", allow_new_models=True)
    assert [(error.line, error.message) for error in refused.value.errors] == [(1, "'rationale' must be text.")]
    assert not Judgment.objects.exists()
