from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from evalhub.llm import get_scorer
from evalhub.llm.stand_ins import is_stand_in
from evalhub.llm.tiny import TINY_MODEL_MARKER


def test_make_tiny_model_writes_a_model_every_transformers_field_can_load(tmp_path, capsys):
    call_command("make_tiny_model", str(tmp_path / "tiny"))
    out = capsys.readouterr().out
    assert f"Use it as transformers:{tmp_path / 'tiny'}" in out
    assert "random weights" in out
    assert (tmp_path / "tiny" / TINY_MODEL_MARKER).is_file()
    assert is_stand_in(f"transformers:{tmp_path / 'tiny'}"), "pages built on it say it is a stand-in"
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "tiny")
    assert tokenizer.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False).startswith("<s><|user|>")
    assert AutoModelForCausalLM.from_pretrained(tmp_path / "tiny").config.model_type == "llama"
    assert get_scorer(f"transformers:{tmp_path / 'tiny'}") is not None


def test_make_tiny_model_into_an_unwritable_place_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(CommandError, match="cannot write the model to"):
        call_command("make_tiny_model", str(blocker / "tiny"))


def test_writing_the_tiny_model_draws_no_progress_bar_into_the_output(tmp_path, capfd):
    """Quickstart writes one before serving: transformers' "Writing model shards" bar came through
    between its lines."""
    from evalhub.llm.tiny import save_tiny_model

    capfd.readouterr()
    save_tiny_model(tmp_path / "tiny", ["a few words to build a vocabulary from"], vocab_size=300)
    out, err = capfd.readouterr()
    assert "model shards" not in out + err and "\r" not in out + err
