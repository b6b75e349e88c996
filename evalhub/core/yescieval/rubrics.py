"""YESciEval's rubrics as their authors ship them: the `yescieval` package (pinned in the requirements) is
the source of truth for every prompt evalhub sends for YESciEval.

The package's rubrics are pydantic models whose `instruct()` renders the messages: the system prompt (a
domain's vocabulary and worked examples injected where a domain is chosen) and the user prompt over the
answer(s), the research question and the papers' titles and abstracts. evalhub finds them by walking the
package's `rubric/pointwise` and `rubric/pairwise` folders (a rubric a later release adds is offered
without a change here); a rubric's family is its folder (breadth, depth, rigor, ...), its key the
module's name (`method_coverage`).

The package's top-level `__init__` imports its fine-tuned judges, and with them torch, transformers and
peft; the rubrics need none of these (pydantic alone). So evalhub registers the package as a bare package
(its folder, its `__init__` not run) and imports the rubric and injector modules from it: rendering a
prompt never loads torch in a web process, and peft is needed only to run the fine-tuned judges.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import pkgutil
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from evalhub.core.registry import Registry

PACKAGE = "yescieval"
# "<Evaluation-Characteristic>\n1. Relevancy: is the information ...\n</Evaluation-Characteristic>"
_CHARACTERISTIC = re.compile(
    r"<Evaluation-Characteristic>\s*(?:\d+\.\s*)?\w+\s*:\s*(?P<definition>.+?)\s*</Evaluation-Characteristic>",
    re.DOTALL,
)
POINTWISE, PAIRWISE = "pointwise", "pairwise"
# The nine rubrics of the paper (YESciEval, ACL 2025, Section 3.1), in its groups: linguistic and stylistic,
# logical and structural, content. The others come with the package's later releases. A run that names
# no rubric rates these (the ones the paper's adversarial variants attack).
PAPER_RUBRICS = (
    "cohesion",
    "conciseness",
    "readability",
    "coherence",
    "integration",
    "relevancy",
    "correctness",
    "completeness",
    "informativeness",
)
# The package's folders in the order evalhub lists them: the paper's groups first; a folder a later
# release adds comes after these.
FAMILIES = ("stylistic", "structural", "fidelity", "breadth", "depth", "rigor", "gap", "innovation")


class YesciEvalMissing(RuntimeError):
    """The `yescieval` package is not installed."""


def package() -> ModuleType:
    """The `yescieval` package, registered without running its `__init__` (see the module's docstring);
    the real one where something imported it whole already."""
    loaded = sys.modules.get(PACKAGE)
    if loaded is not None:
        return loaded
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.submodule_search_locations is None:
        raise YesciEvalMissing("YESciEval's rubrics need the `yescieval` package: pip install yescieval")
    bare = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = bare  # its submodules import from its folder; its __init__ is not run
    return bare


def package_module(name: str) -> ModuleType:
    """A module of the package (`base.parser`, `injector`, ...), imported without its judges."""
    return _module(name)


def _module(name: str) -> ModuleType:
    package()
    # `base` first, as the package's own __init__ imports it: base and injector import each other.
    importlib.import_module(f"{PACKAGE}.base")
    return importlib.import_module(f"{PACKAGE}.{name}")


@dataclass(frozen=True)
class Rubric:
    """One of the package's rubrics: `key` (evalhub's name), `name` (the package's, the JSON key the
    judge answers under), `kind` (pointwise or pairwise), `family` (its folder)."""

    key: str
    name: str
    kind: str
    family: str
    model: Any  # the package's class

    @property
    def title(self) -> str:
        """The package's name in words: "MethodCoverage" → "Method coverage"."""
        words = re.findall(r"[A-Z][a-z]*|[a-z]+|\d+", self.name)
        return " ".join([words[0], *(word.lower() for word in words[1:])]) if words else self.name

    @property
    def definition(self) -> str:
        """The characteristic as the rubric's prompt states it (its <Evaluation-Characteristic>)."""
        template = str(self.model.model_fields["system_prompt_template"].default)
        found = _CHARACTERISTIC.search(template)
        text = " ".join(found.group("definition").split()) if found else ""
        return text[:1].upper() + text[1:]

    @property
    def source(self) -> str:
        if self.key in PAPER_RUBRICS:
            return "YESciEval paper (ACL 2025)"
        return f"yescieval {version()}"

    def instance(
        self, question: str, answers: tuple[str, ...], papers: Mapping[str, str], domain: str | None = None
    ) -> Any:
        """The package's rubric object for these inputs: what `instruct()` renders."""
        fields: dict[str, Any] = {"question": question, "papers": dict(papers)}
        if self.kind == PAIRWISE:
            fields["answer_a"], fields["answer_b"] = answers
        else:
            (fields["answer"],) = answers
        if domain:
            injectors = _module("injector")
            fields.update(domain=domain, vocabulary=injectors.VocabularyInjector(), example=injectors.ExampleInjector())
        return self.model(**fields)


@functools.cache
def version() -> str:
    from importlib.metadata import version as installed

    return installed(PACKAGE)


def _is_rubric(kind: str) -> Callable[[str, Any], str]:
    def check(name: str, entry: Any) -> str:
        parent = _module("base").PointwiseRubric if kind == POINTWISE else _module("base").PairwiseRubric
        if not isinstance(entry, Rubric) or entry.kind != kind:
            return f"is not a {kind} Rubric"
        return (
            "" if issubclass(entry.model, parent) else f"its model is not a subclass of yescieval's {parent.__name__}"
        )

    return check


# Every rubric a run may choose: the package's (added on first use, below), and any an extension adds
# (a subclass of the package's PointwiseRubric or PairwiseRubric: docs/extending/judge-prompts.md).
POINTWISE_RUBRICS: Registry[Rubric] = Registry(
    "YESciEval pointwise rubric", docs="extending/judge-prompts.md", what="rubric", check=_is_rubric(POINTWISE)
)
PAIRWISE_RUBRICS: Registry[Rubric] = Registry(
    "YESciEval pairwise rubric", docs="extending/judge-prompts.md", what="rubric", check=_is_rubric(PAIRWISE)
)
REGISTRIES = {POINTWISE: POINTWISE_RUBRICS, PAIRWISE: PAIRWISE_RUBRICS}


def rubrics() -> dict[str, dict[str, Rubric]]:
    """{kind: {key: rubric}}: every rubric the installed package ships, in the order evalhub lists them
    (the paper's groups first), then those an extension added."""
    _add_the_packages()
    return {
        kind: dict(sorted(registry.items(), key=lambda item: _listed(item[1]))) for kind, registry in REGISTRIES.items()
    }


@functools.cache
def _add_the_packages() -> None:
    base = _module("base")
    for kind, parent in ((POINTWISE, base.PointwiseRubric), (PAIRWISE, base.PairwiseRubric)):
        locations = _folder(f"rubric.{kind}")
        for info in sorted(pkgutil.walk_packages(locations, prefix=f"{PACKAGE}.rubric.{kind}."), key=lambda m: m.name):
            if info.ispkg:
                continue
            module = importlib.import_module(info.name)
            family, key = info.name.split(".")[-2:]
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, parent)
                    and value is not parent
                    and value.__module__ == module.__name__
                    and key not in REGISTRIES[kind]  # an extension's own rubric of that key stands
                ):
                    model: Any = value  # a pydantic model: its fields' defaults are its class's
                    name = str(model.model_fields["name"].default)
                    REGISTRIES[kind].add(key, Rubric(key=key, name=name, kind=kind, family=family, model=model))


def _listed(rubric: Rubric) -> tuple[int, int, str]:
    family = FAMILIES.index(rubric.family) if rubric.family in FAMILIES else len(FAMILIES)
    paper = PAPER_RUBRICS.index(rubric.key) if rubric.key in PAPER_RUBRICS else len(PAPER_RUBRICS)
    return family, paper, rubric.key


def _folder(name: str) -> list[str]:
    """A subpackage's folder, read from the package's (its pairwise rubrics ship without an `__init__`)."""
    root = package().__path__
    return [f"{location}/{name.replace('.', '/')}" for location in root]


def rubric(key: str, kind: str = POINTWISE) -> Rubric:
    """A rubric by its key; ValueError naming the known ones for an unknown key. Read for every prompt a
    run sends: a lookup, not the sorted listing."""
    _add_the_packages()
    known = REGISTRIES[kind]
    if key not in known:
        raise ValueError(f"unknown {kind} YESciEval rubric {key!r}; the package's are {', '.join(rubrics()[kind])}.")
    return known[key]


@functools.cache
def domains() -> dict[str, str]:
    """{domain id: its name} of the domains whose vocabulary and examples the package injects."""
    shipped = _module("injector.domains")
    return {domain.ID: domain.verbalized for domain in shipped.domains}


def messages(
    key: str,
    question: str,
    answers: tuple[str, ...],
    papers: Mapping[str, str],
    *,
    kind: str = POINTWISE,
    domain: str | None = None,
) -> list[dict[str, str]]:
    """The messages the package renders for one rubric (its `instruct()`), as evalhub sends them."""
    if domain and domain not in domains():
        raise ValueError(f"unknown YESciEval domain {domain!r}; the package's are {', '.join(domains())}.")
    rendered = rubric(key, kind).instance(question, answers, papers, domain).instruct()
    return [{"role": str(message["role"]), "content": str(message["content"])} for message in rendered]


def targets(rubric: str = "", family: str = "") -> tuple[str, ...]:
    """The pointwise rubrics an adversarial copy is rated on: the one its attack names, or every rubric
    of the family it names (a perturbation's `rubric` / `rubric_family`)."""
    if rubric:
        return (rubric,)
    return tuple(key for key, r in rubrics()[POINTWISE].items() if family and r.family == family)


def expand(names: list[str]) -> list[str]:
    """Rubric keys from what a run was told: a family's name (breadth, rigor, ...) stands for each of its
    pointwise rubrics, a key for itself; in the order given, each once."""
    known = rubrics()[POINTWISE]
    out: list[str] = []
    for name in names:
        members = [key for key, r in known.items() if r.family == name] if name not in known else [name]
        out += [key for key in members or [name] if key not in out]
    return out
