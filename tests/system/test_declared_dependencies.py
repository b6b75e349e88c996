"""What evalhub imports at run time is installed by `requirements.txt`, not only by the development file:
`inspect_ai` and `opentelemetry` were declared for development only (a production image could not import
Inspect logs or send OpenTelemetry events) and `ijson` and `huggingface_hub` came only through another
package's dependencies. Imports inside functions count: a lazy import is still an import."""

from __future__ import annotations

import ast
import re
import sys
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _normalised(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # the package index's rule for names


def declared(requirements: Path) -> set[str]:
    names = set()
    for line in requirements.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            names.add(_normalised(re.split(r"[=<>!~\[ ;]", line, maxsplit=1)[0]))
    return names


def imported_modules() -> dict[str, str]:
    """Each top-level module evalhub's code imports from outside itself and the standard library, with
    one file that imports it."""
    found: dict[str, str] = {}
    for path in sorted((ROOT / "evalhub").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.split(".")[0]
                if top not in sys.stdlib_module_names and top not in {"evalhub", "__future__"}:
                    found.setdefault(top, str(path.relative_to(ROOT)))
    return found


# Declared dependencies of the packages installed without them (requirements-no-deps.txt) that evalhub
# leaves out on purpose; the file says why for each.
LEFT_OUT = {"peft", "pre-commit"}


# Imported only where a deployment asked for it, behind an ImportError that says what to install or do
# instead (each with where and why).
OPTIONAL = {
    "peft": "evalhub/llm/providers/yescieval_judges.py: a YESciEval judge given as a LoRA adapter, not merged",
}


def test_every_module_evalhub_imports_is_installed_by_the_runtime_requirements():
    runtime = declared(ROOT / "requirements.txt") | declared(ROOT / "requirements-no-deps.txt")
    distributions = packages_distributions()
    undeclared = {
        module: (where, distributions.get(module, []))
        for module, where in imported_modules().items()
        if module not in OPTIONAL and not any(_normalised(name) in runtime for name in distributions.get(module, []))
    }
    assert not undeclared, f"imported at run time, not in requirements.txt: {undeclared}"


def test_the_development_file_adds_to_the_runtime_file_and_repeats_none_of_it():
    development = declared(ROOT / "requirements-dev.txt")
    assert "-r requirements.txt" in (ROOT / "requirements-dev.txt").read_text()
    assert not development & declared(ROOT / "requirements.txt")


def test_what_the_no_deps_packages_declare_is_installed_or_left_out_on_purpose_with_a_reason():
    from importlib.metadata import requires

    runtime = declared(ROOT / "requirements.txt")
    text = (ROOT / "requirements-no-deps.txt").read_text()
    for package in declared(ROOT / "requirements-no-deps.txt"):
        needs = {_normalised(re.split(r"[=<>!~\[ ;(]", line, maxsplit=1)[0]) for line in requires(package) or []}
        assert needs - runtime <= LEFT_OUT, (package, needs - runtime - LEFT_OUT)
    assert all(name in text for name in LEFT_OUT)  # each named where the file says why


def test_an_optional_import_is_guarded_where_it_is_made():
    for module, why in OPTIONAL.items():
        where = ROOT / why.split(":", 1)[0]
        text = where.read_text()
        assert f"from {module} import" in text or f"import {module}" in text
        assert "except ImportError" in text, f"{where}: {module} must be imported behind an ImportError that says why"
