"""An export pushed to a Hugging Face hub as a dataset: the same card and Parquet file the download
holds, in one commit to a private repository, the token read from a named variable and never shown;
a hub that refuses is a clear error. Against a loopback stand-in of the hub's upload endpoints."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.core.management import CommandError, call_command

from evalhub.catalog.demo import do_load_demo
from tests.system.fake_hub import serve

pytestmark = pytest.mark.django_db

SECRET = "hf_" + "s3cr3t" * 6


@pytest.fixture
def hub(monkeypatch):
    hub, server = serve()
    monkeypatch.setenv("HF_ENDPOINT", hub.url)  # huggingface_hub's own setting for another hub
    monkeypatch.setattr("huggingface_hub.constants.ENDPOINT", hub.url)
    yield hub
    server.shutdown()


def export(tmp_path, *more: str) -> None:
    call_command("export_results", "--out", str(tmp_path), "--format", "hf", "--benchmark", "demo", *more)


def test_the_hf_export_is_a_dataset_zip_and_a_push_commits_its_files_to_a_private_repository(
    tmp_path, hub, monkeypatch, capsys
):
    do_load_demo()
    monkeypatch.setenv("EVALHUB_HUB_TOKEN", SECRET)
    export(
        tmp_path, "--table", "responses", "--push-to-hub", "team/demo-responses", "--hub-token-env", "EVALHUB_HUB_TOKEN"
    )
    with zipfile.ZipFile(io.BytesIO((tmp_path / "demo.responses.hf.zip").read_bytes())) as archive:
        zipped = {name: archive.read(name) for name in archive.namelist()}
    pushed = hub.files["team/demo-responses"]
    assert set(pushed) == set(zipped) == {"README.md", "data/train-00000-of-00001.parquet"}
    assert pushed == zipped, "the card and the Parquet file pushed are the ones written, byte for byte"
    assert hub.repos["team/demo-responses"]["visibility"] == "private"
    assert {auth for _, auth in hub.calls} == {f"Bearer {SECRET}"}
    out = capsys.readouterr().out
    assert "pushed to team/demo-responses: " + hub.url in out and SECRET not in out


def test_without_the_token_nothing_is_asked_of_the_hub(tmp_path, hub, monkeypatch):
    do_load_demo()
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with pytest.raises(CommandError, match="set HF_TOKEN to a Hugging Face token that may write to team/x"):
        export(tmp_path, "--table", "responses", "--push-to-hub", "team/x")
    assert hub.calls == []


def test_a_hub_that_refuses_is_a_clear_error_without_the_token(tmp_path, hub, monkeypatch):
    do_load_demo()
    monkeypatch.setenv("HF_TOKEN", SECRET)
    hub.refuse = 403
    with pytest.raises(CommandError, match="the hub refused or could not be reached") as refused:
        export(tmp_path, "--table", "responses", "--push-to-hub", "team/x")
    assert SECRET not in str(refused.value)


def test_a_push_is_of_one_dataset(tmp_path, hub):
    do_load_demo()
    with pytest.raises(CommandError, match="one --benchmark and one --table"):
        export(tmp_path, "--push-to-hub", "team/x")
