"""Every kind of file reaches its check as a stream, from the command and from the upload page (a file
read whole into bytes first would hold ten million rows in memory before a row is checked)."""

from __future__ import annotations

import importlib
import io

import pytest
from django.core.management import call_command

from evalhub.catalog.actions import benchmarks, judgments, scores
from evalhub.catalog.models import Judgment, Response
from tests.catalog.test_import_benchmark_streams import answers_csv
from tests.catalog.test_import_score_streams import scores_csv
from tests.catalog.test_import_streams import labels_csv
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

KINDS = {  # module, its check, command, page, a file of 60 rows, what 60 rows store
    "benchmark": (benchmarks, "check_import_file", "import_benchmark", "/benchmarks/import/", answers_csv, Response),
    "scores": (scores, "check_score_file", "import_scores", "/judges/import-scores/", scores_csv, Judgment),
    "judgments": (judgments, "check_judgment_file", "import_judgments", "/judges/import/", labels_csv, Judgment),
}


@pytest.mark.parametrize("kind", KINDS)
def test_the_command_and_the_upload_page_hand_the_check_a_stream(kind, monkeypatch, client, tmp_path):
    module, check_name, command, page, rows_of, stored = KINDS[kind]
    seen = []
    check = getattr(module, check_name)

    def recording(filename, data, **options):
        seen.append(type(data))
        return check(filename, data, **options)

    monkeypatch.setattr(module, check_name, recording)
    command_module = importlib.import_module(f"evalhub.catalog.management.commands.{command}")
    if hasattr(command_module, check_name):  # a command that names the check itself, bound when it was imported
        monkeypatch.setattr(command_module, check_name, recording)
    path = tmp_path / "rows.csv"
    path.write_bytes(rows_of(60))
    call_command(command, str(path), "--create-models", "--benchmark", "study", stdout=io.StringIO())
    client.force_login(make_user("ada", "admin"))
    with path.open("rb") as upload:
        form = {"file": upload, "benchmark": "study", "task_type": "other", "layout": "auto", "create_models": "on"}
        assert client.post(page, form).status_code == 302
    assert len(seen) == 2
    assert not any(type_ is bytes for type_ in seen), seen
    assert stored.objects.count() == 60
