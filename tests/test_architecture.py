"""Rules of the code base that a test can hold."""

from __future__ import annotations

import subprocess
import sys
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
    """Layers, no cycle among the apps (function-level imports count), actions that enqueue by name:
    the contracts in pyproject.toml, checked by import-linter on the whole package."""
    linter = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(linter)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "4 kept, 0 broken" in result.stdout
