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


def test_every_improvers_run_is_an_improvement_run_found_from_its_job_by_its_models_name():
    """The run's common fields (version, split, job, made, who, when) are declared once; a job reaches
    its run by the model's name and a chunk loads it with its version and split in one query."""
    from evalhub.alignment.models import ImprovementRun
    from evalhub.jobs.models import Job

    for kind in IMPROVERS:
        runner = kinds.registered_runner(kind)
        assert issubclass(runner.model, ImprovementRun), kind
        assert runner.run_attr == runner.model._meta.model_name, kind
        assert Job._meta.get_field(runner.run_attr).related_model is runner.model, kind
        own = {field.name for field in runner.model._meta.local_fields} - {"id"}
        common = {field.name for field in ImprovementRun._meta.fields}
        assert common <= own and "load" not in vars(runner), kind
