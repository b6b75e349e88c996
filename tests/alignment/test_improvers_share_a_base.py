"""The three judge improvers are one kind of class: each reads train labels and makes the next version
through `ImproverRunner`, so a fourth is one subclass (docs/extending/improvers.md)."""

from __future__ import annotations

from evalhub.alignment.improvers.base import ImproverRunner
from evalhub.alignment.models import Method
from evalhub.jobs import kinds

IMPROVERS = ("few_shot", "settings_search", "instruction_rewrite")


def test_every_improver_kind_is_an_improver_runner_that_names_its_method():
    for kind in IMPROVERS:
        runner = kinds.registered_runner(kind)
        assert issubclass(runner, ImproverRunner), kind
        assert runner.method in Method.values and runner.method != Method.BY_HAND, kind
    assert len({kinds.registered_runner(kind).method for kind in IMPROVERS}) == len(IMPROVERS)


def test_no_improver_derives_a_version_or_reads_labels_but_through_the_base():
    from pathlib import Path

    folder = Path(__file__).resolve().parents[2] / "evalhub" / "alignment" / "improvers"
    for path in folder.glob("*.py"):
        if path.name in {"base.py", "__init__.py"}:
            continue
        text = path.read_text()
        runner_part = text[text.find("Runner(ImproverRunner") :] if "Runner(ImproverRunner" in text else ""
        assert "do_derive_version(" not in runner_part, path.name
        assert "training_pairs(" not in runner_part, path.name
