"""Rules of the code base that a test can hold."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PURE_PACKAGES = ("evalhub.core", "evalhub.llm")

IMPORT_ALL = """
import importlib, pkgutil, sys
for package_name in {packages!r}:
    package = importlib.import_module(package_name)
    for info in pkgutil.walk_packages(package.__path__, package_name + "."):
        importlib.import_module(info.name)
leaked = sorted({{name.split(".")[0] for name in sys.modules}} & {{"django", "channels", "celery"}})
print(",".join(leaked))
"""


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_the_pure_packages_import_no_django(package):
    # A fresh interpreter: this test process has Django loaded already.
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_ALL.format(packages=(package,))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert result.stdout.strip() == "", f"{package} imports {result.stdout.strip()}"


@pytest.mark.django_db
def test_every_app_has_its_migrations_committed():
    from django.core.management import call_command

    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_the_import_contracts_hold():
    """Layers, the floors of the apps, no cycle among them (function-level imports count), actions that enqueue by name,
    methods that do not read the boards, a job engine with no domain query: the contracts in
    pyproject.toml, checked by import-linter on the whole package."""
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(linter)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "9 kept, 0 broken" in result.stdout


WRITES = {"create", "bulk_create", "bulk_update", "update", "delete", "get_or_create", "update_or_create"}
# Writes across apps not yet moved behind the owning app's actions; the list may only shrink (it is
# empty since the issue log and the rewrite cache moved to the worklog app): a new cross-app write
# fails the test below.
KNOWN_CROSS_APP_WRITES: set[tuple[str, str]] = set()


def cross_app_writes(package: Path = ROOT / "evalhub") -> set[tuple[str, str, str]]:
    """(app, other app's model, file:line) for every `Model.objects….<write>(…)` in an app's own code
    (migrations, admin and management commands aside) whose model another app's models.py defines,
    and every `<name>.save(…)` whose name is such a model's (`debate.save()` outside the debates app)."""
    import ast

    from django.apps import apps

    owners = {
        model.__name__.lower(): f"{model._meta.app_label}.{model.__name__}"
        for model in apps.get_models()
        if model.__module__.startswith("evalhub.")
    }
    found = set()
    for path in sorted(package.glob("*/**/*.py")):
        parts = path.relative_to(package).parts
        app = parts[0]
        if app in {"core", "llm"} or {"migrations", "management"} & set(parts) or path.name == "admin.py":
            continue
        tree = ast.parse(path.read_text())
        foreign = {}  # local name → "app.Model"
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evalhub."):
                owner = node.module.split(".")
                if len(owner) == 3 and owner[2] == "models" and owner[1] != app:
                    for alias in node.names:
                        foreign[alias.asname or alias.name] = f"{owner[1]}.{alias.name}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "save":
                receiver = node.func.value
                name = receiver.id if isinstance(receiver, ast.Name) else getattr(receiver, "attr", "")
                model = owners.get(name)
                if model is not None and not model.startswith(f"{app}."):
                    found.add((app, model, f"{path.relative_to(package)}:{node.lineno}"))
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in WRITES):
                continue
            target = node.func.value
            while isinstance(target, (ast.Call, ast.Attribute)):  # Model.objects.filter(...).update(...)
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr == "objects"
                    and isinstance(target.value, ast.Name)
                ):
                    model = foreign.get(target.value.id)
                    if model is not None:
                        found.add((app, model, f"{path.relative_to(package)}:{node.lineno}"))
                    break
                target = target.func if isinstance(target, ast.Call) else target.value
    return found


def test_each_app_writes_only_its_own_tables():
    """An effect on another app's tables goes through that app's actions (debates.actions.do_settle_debate,
    catalog's import actions…), so its rules and its live updates are in one place."""
    unexpected = sorted(w for w in cross_app_writes() if (w[0], w[1]) not in KNOWN_CROSS_APP_WRITES)
    assert unexpected == [], "\n".join(f"{app} writes {model} at {where}" for app, model, where in unexpected)


def test_the_check_of_cross_app_writes_sees_one(tmp_path):
    """The generation runner's old write of scoring's issue log, and a debate saved by another app."""
    (tmp_path / "generation").mkdir()
    (tmp_path / "generation" / "job.py").write_text(
        "from evalhub.scoring.models import RowIssue\n\ndef write(issues):\n    RowIssue.objects.bulk_create(issues)\n"
    )
    (tmp_path / "adjudication").mkdir()
    (tmp_path / "adjudication" / "settle.py").write_text("def settle(debate):\n    debate.save()\n")
    (tmp_path / "worklog").mkdir()
    (tmp_path / "worklog" / "actions.py").write_text(
        "from evalhub.worklog.models import RowIssue\n\ndef write(issues):\n    RowIssue.objects.bulk_create(issues)\n"
    )
    assert {(app, model) for app, model, _ in cross_app_writes(tmp_path)} == {
        ("generation", "scoring.RowIssue"),
        ("adjudication", "debates.Debate"),
    }


# The job engine's own steps; a kind reaches them only through JobRunner.create and JobRunner.start.
JOB_MAKING_CALLS = {"do_create_job", "do_plan_chunks", "do_create_chunks"}


def job_making_calls(package: Path = ROOT / "evalhub") -> list[str]:
    """file:line of every call that makes a job or its chunks outside evalhub/jobs."""
    import ast

    found = []
    for path in sorted(package.glob("**/*.py")):
        if path.relative_to(package).parts[0] == "jobs":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
                if name in JOB_MAKING_CALLS:
                    found.append(f"{path.relative_to(package)}:{node.lineno}")
    return found


def test_no_kind_makes_its_own_job():
    """Every kind's run starts through JobRunner.create (a draft debate run through JobRunner.start):
    one place makes the job, the run and the chunks, so every kind's job page, progress total and
    chunk plan come about the same way."""
    assert job_making_calls() == []


def test_the_check_of_job_making_calls_sees_one(tmp_path):
    (tmp_path / "scoring").mkdir()
    (tmp_path / "scoring" / "actions.py").write_text(
        "from evalhub.jobs.actions import do_create_job\n\ndef start():\n    return do_create_job('gem', 'GEM')\n"
    )
    assert job_making_calls(tmp_path) == ["scoring/actions.py:4"]


LONG_MODULE = 500


def long_modules(package: Path = ROOT / "evalhub") -> set[str]:
    return {
        f"evalhub/{path.relative_to(package)}"
        for path in package.glob("**/*.py")
        if "migrations" not in path.parts and len(path.read_text().splitlines()) > LONG_MODULE
    }


def test_a_module_over_500_lines_says_why_in_the_architecture_page():
    """Rooms by concept: a module past 500 lines is split, or docs/architecture.md names it with the
    one concept that fills it."""
    explained = (ROOT / "docs" / "architecture.md").read_text()
    assert sorted(m for m in long_modules() if f"`{m}`" not in explained) == []


def test_the_check_of_long_modules_sees_one(tmp_path):
    (tmp_path / "catalog").mkdir()
    (tmp_path / "catalog" / "actions.py").write_text("x = 1\n" * (LONG_MODULE + 1))
    (tmp_path / "catalog" / "migrations").mkdir()
    (tmp_path / "catalog" / "migrations" / "0001_initial.py").write_text("x = 1\n" * (LONG_MODULE + 1))
    assert long_modules(tmp_path) == {"evalhub/catalog/actions.py"}


def unused_actions(package: Path = ROOT / "evalhub") -> list[str]:
    """`do_*` and `check_*` functions of an app's actions that no code of the package calls or names
    (tests do not count: an action only a test calls is dead code the tests keep alive)."""
    sources = {path: path.read_text() for path in package.glob("**/*.py") if "migrations" not in path.parts}
    words = Counter(word for text in sources.values() for word in re.findall(r"\b(?:do|check)_\w+\b", text))
    found = []
    for path, text in sources.items():
        if "actions" in path.parts or path.stem == "actions":
            for name in re.findall(r"^def ((?:do|check)_\w+)\(", text, re.MULTILINE):
                if words[name] <= 1:  # its definition only
                    found.append(f"{path.relative_to(package)}:{name}")
    return sorted(found)


def test_every_action_is_called_by_the_app():
    """`jobs.actions.do_finish_job` outlived its last caller, and `do_request_cancel` was kept only for
    tests; an action nothing calls is removed, not kept for later."""
    assert unused_actions() == []


def test_the_check_of_unused_actions_sees_one(tmp_path):
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "actions.py").write_text("def do_used():\n    pass\n\n\ndef do_unused():\n    do_used()\n")
    (tmp_path / "jobs" / "views.py").write_text("from evalhub.jobs.actions import do_used\n")
    assert unused_actions(tmp_path) == ["jobs/actions.py:do_unused"]


def test_the_architecture_page_names_every_app_and_every_kind_of_long_work():
    """It listed five of the eight job kinds and never named the `alignment` app."""
    from django.apps import apps

    from evalhub.jobs import kinds

    page = (ROOT / "docs" / "architecture.md").read_text()
    ours = {config.label for config in apps.get_app_configs() if config.name.startswith("evalhub.")}
    assert sorted(label for label in ours if f"`{label}`" not in page) == []
    assert sorted(kind for kind in kinds.KINDS if f"`{kind}`" not in page) == []
    assert len(kinds.KINDS) >= 8
