"""A judge run's verdicts as an Inspect eval log: inspect-ai's own reader reads it back with one sample
per pair, order and sample asked, the judge's answers, the reference as the judge saw the order, and an
accuracy that equals the meta-evaluation page's agreement."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from inspect_ai.log import read_eval_log

from evalhub.debates.judging import meta_evaluation
from tests.debates.test_judging import judge, reference  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db(transaction=True)


def test_inspect_reads_a_judge_runs_verdicts_back_with_the_pages_agreement(reference, agents, tmp_path, capsys):  # noqa: F811
    agents(lambda agent, messages: "First.\n1")
    run = judge(reference, check_position=True)
    path = tmp_path / "judge.eval"
    call_command("export_judge_run", str(run.pk), "--out", str(path))
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.model == "scripted-0" and log.eval.task == "evalhub/judge_run"
    assert len(log.samples) == run.verdicts.count() == 6
    assert {sample.output.completion for sample in log.samples} == {"First.\n1"}
    (report,), _, _ = meta_evaluation(reference)
    # The page counts each pair once in the debate's order; the log scores every order asked: the judge
    # that always says 1 is right where the reference is 1 as shown, whichever order that is.
    shown = [s for s in log.samples if not s.metadata["reversed_order"] and s.scores]
    assert sum(s.scores["reference_agreement"].value == "C" for s in shown) == report.example.hits
    assert len(shown) == report.example.total
    flipped = [s for s in log.samples if s.metadata["reversed_order"] and s.scores]
    assert {s.target for s in flipped} == {"1", "2"} and all(
        s.target != t.target for s, t in zip(flipped, shown, strict=True)
    )
    waiting = [s for s in log.samples if not s.scores]
    assert len(waiting) == 2 and all(s.metadata["reference"] == "none yet" for s in waiting)
    metric = log.results.scores[0].metrics["accuracy"].value
    assert metric == pytest.approx(2 / 4)  # two decided pairs, each asked in both orders: right twice
    assert f"{path}: 6 samples" in capsys.readouterr().out


def test_the_api_gives_the_same_log_to_a_reader(reference, agents, client, tmp_path):  # noqa: F811
    from evalhub.accounts.actions import do_create_token
    from tests.conftest import make_user

    agents(lambda agent, messages: "Second.\n2")
    run = judge(reference)
    token = do_create_token(make_user("reader", "viewer"), "CI", "read", 30)[1]
    answer = client.get(f"/api/v1/judge-runs/{run.pk}/inspect-log", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200 and answer["Content-Disposition"].endswith(f'judge-run-{run.pk}.eval"')
    (tmp_path / "api.eval").write_bytes(answer.content)
    log = read_eval_log(str(tmp_path / "api.eval"))
    assert len(log.samples) == 3 and {s.output.completion for s in log.samples} == {"Second.\n2"}
    assert (
        client.get("/api/v1/judge-runs/9999/inspect-log", headers={"Authorization": f"Bearer {token}"}).status_code
        == 404
    )
