"""`pointwise_report`: a scores CSV in, the pointwise meta-evaluation out, bad lines named."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from tests.core.statistics.test_pointwise import BAD, survey


def test_the_command_writes_the_report_per_criterion_and_names_a_bad_line(tmp_path):
    rows = ["prompt_id,system,rater,rater_kind,score,criterion"]
    for s in survey(5):
        rows.append(f"{s.prompt},{s.system},{s.rater},{'person' if s.person else 'judge'},{s.score},fluency")
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "report.json"
    call_command("pointwise_report", "--scores", str(path), "--out", str(out), "--resamples", "100")
    report = json.loads(out.read_text())["criteria"]["fluency"]
    assert set(report["judges"]) == {"good-judge", "length-metric"}
    assert report["judges"]["good-judge"]["item_spearman"]["n"] == 40
    path.write_text(BAD)
    with pytest.raises(CommandError, match="line 3: rater_kind must be person or judge"):
        call_command("pointwise_report", "--scores", str(path), "--out", str(out))
