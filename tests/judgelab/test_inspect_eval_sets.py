"""Inspect logs as Inspect writes and people keep them: an eval-set folder made by `inspect_ai.eval_set`
itself (its `eval-set.json` and `logs.json` beside the logs are the set's manifests, not logs), zipped or
named on the command line, and logs gzipped for keeping (`.eval.gz`, `.json.gz`)."""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
import textwrap
import zipfile

import pytest
from django.core.management import call_command

from evalhub.catalog.models import Judgment, Prompt
from tests.catalog.test_import_scores import inspect_log
from tests.judgelab.test_import_scores_page import upload

pytestmark = pytest.mark.django_db

# An eval set of two tasks run by Inspect itself, offline: the solver writes each answer (no model is
# called, so nothing is fetched), `match` scores it; 1+1 is answered wrong.
EVAL_SET = textwrap.dedent(
    """
    import sys
    from inspect_ai import Task, eval_set
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import match
    from inspect_ai.solver import solver

    @solver
    def answer():
        async def solve(state, generate):
            first = int(state.input_text.split()[2].split("+")[0])
            state.output = ModelOutput.from_content(model="mockllm/model", content=str(2 * first + (first == 1)))
            return state
        return solve

    def task(name):
        samples = [Sample(input=f"What is {i}+{i}?", target=str(2 * i), id=i) for i in (1, 2, 3)]
        return Task(dataset=samples, solver=answer(), scorer=match(), name=name)

    done, logs = eval_set([task("arith"), task("sums")], log_dir=sys.argv[1], model="mockllm/model", display="none")
    assert done and all(log.status == "success" for log in logs), [log.status for log in logs]
    """
)


@pytest.fixture(scope="module")
def eval_set_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect")
    folder = root / "eval-set"
    # Inspect keeps traces and buffers under the user's data and cache folders: here, under the test's own.
    env = {**os.environ, "XDG_DATA_HOME": str(root / "data"), "XDG_CACHE_HOME": str(root / "cache")}
    subprocess.run([sys.executable, "-c", EVAL_SET, str(folder)], check=True, env=env, timeout=300)
    assert {"eval-set.json", "logs.json"} <= set(os.listdir(folder)), "Inspect writes its manifests beside the logs"
    return folder


def stored() -> dict[tuple[str, str], float]:
    return {
        (j.response.prompt.external_id, j.criterion.slug): j.score
        for j in Judgment.objects.select_related("response__prompt", "criterion")
    }


EXPECTED = {(f"{task}/{i}", "match"): float(i != 1) for task in ("arith", "sums") for i in (1, 2, 3)}


def test_an_eval_set_folder_as_inspect_writes_it_imports_from_the_command_line(eval_set_folder):
    call_command("import_scores", str(eval_set_folder), "--benchmark", "set", "--create-models", stdout=io.StringIO())
    assert stored() == EXPECTED


def test_an_eval_set_folder_zipped_whole_imports_through_the_page(eval_set_folder, admin_user, login):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for file in sorted(eval_set_folder.iterdir()):
            archive.write(file, f"eval-set/{file.name}")
    response = upload(login(admin_user), "eval-set.zip", buffer.getvalue())
    assert response.status_code == 302, response.content.decode()[:2000]
    assert stored() == EXPECTED


def test_a_zip_holding_only_an_eval_sets_manifests_says_it_holds_no_log(eval_set_folder, admin_user, login):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in ("eval-set.json", "logs.json"):
            archive.write(eval_set_folder / name, name)
    response = upload(login(admin_user), "manifests.zip", buffer.getvalue())
    assert "holds no Inspect log" in response.content.decode() and not Judgment.objects.exists()


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_a_gzipped_log_imports_as_the_log_does(tmp_path, admin_user, login, suffix):
    inspect_log(tmp_path / f"run{suffix}", {"q1": {"match": "C"}, "q2": {"match": 0.5}})
    packed = gzip.compress((tmp_path / f"run{suffix}").read_bytes())
    response = upload(login(admin_user), f"run{suffix}.gz", packed)
    assert response.status_code == 302, response.content.decode()[:2000]
    assert stored() == {("tiny/q1", "match"): 1.0, ("tiny/q2", "match"): 0.5}
    assert set(Prompt.objects.values_list("external_id", flat=True)) == {"tiny/q1", "tiny/q2"}


def test_a_gzipped_array_of_score_rows_is_still_read_as_score_rows(admin_user, login):
    rows = b'[{"prompt_id": "p1", "prompt": "Q?", "model": "m", "response": "A", "rater": "r", "criterion": "c", '
    rows += b'"score": 1}]'
    response = upload(login(admin_user), "scores.json.gz", gzip.compress(rows))
    assert response.status_code == 302, response.content.decode()[:2000]
    assert stored() == {("p1", "c"): 1.0}
