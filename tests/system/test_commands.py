"""The commands that move data in and out start without Django's URL checks (they import every view)."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from evalhub.catalog.models import Judgment

CSV = (
    "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner,probability_a\n"
    "p1,Is 221 prime?,model-a,model-b,No: 13 x 17.,Yes.,judge-1,a,0.9\n"
)


@pytest.mark.django_db
def test_an_import_runs_its_model_checks_but_not_the_url_checks(tmp_path, settings):
    settings.ROOT_URLCONF = "tests.system.no_such_urlconf"  # the URL checks would fail importing it
    path = tmp_path / "judgments.csv"
    path.write_text(CSV)
    out = io.StringIO()
    call_command("import_judgments", str(path), "--create-models", skip_checks=False, stdout=out)
    assert Judgment.objects.get().verdict == 1 and "1 new" in out.getvalue()
