"""Tables that leave evalhub: the same numbers as the pages, as rows.

`responses` is written in the import schema, so an export can be imported again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from django.http import HttpResponse

from evalhub.catalog.models import Benchmark, Judgment, Prompt, Response
from evalhub.core.files.tables import to_text
from evalhub.core.registry import Registry
from evalhub.system.downloads import download


def response_rows(benchmark: Benchmark) -> Iterator[dict[str, Any]]:
    """One row per original response, and one per prompt that has none (import schema)."""
    prompts = benchmark.prompts.order_by("id")
    responses = (
        Response.objects.filter(prompt__benchmark=benchmark, parent__isnull=True)
        .select_related("model")
        .order_by("prompt_id", "model__slug", "variant")
    )
    by_prompt: dict[int, list[Response]] = {}
    for response in responses:
        by_prompt.setdefault(response.prompt_id, []).append(response)
    for prompt in prompts:
        base = _prompt_columns(prompt)
        written = by_prompt.get(prompt.id, [])
        if not written:
            yield base
        for response in written:
            yield {
                **base,
                "model": response.model.slug,
                "response_variant": response.variant,
                "response": response.text,
                **{f"response_metadata.{key}": value for key, value in sorted((response.metadata or {}).items())},
            }


def _prompt_columns(prompt: Prompt) -> dict[str, Any]:
    row: dict[str, Any] = {"prompt_id": prompt.external_id, "prompt": prompt.text}
    for name in ("category", "synopsis", "source", "reference_answer", "rating_guidelines"):
        if getattr(prompt, name):
            row[name] = getattr(prompt, name)
    row.update({f"privileged.{key}": value for key, value in sorted(prompt.privileged.items())})
    row.update({f"metadata.{key}": value for key, value in sorted(prompt.metadata.items())})
    return row


def judgment_rows(benchmark: Benchmark) -> Iterator[dict[str, Any]]:
    judgments = (
        Judgment.objects.filter(response__prompt__benchmark=benchmark)
        .select_related(
            "criterion", "judge_model", "judge_user", "response__model", "response__prompt", "response_2__model"
        )
        .order_by("id")
    )
    for judgment in judgments.iterator(chunk_size=2000):
        second = judgment.response_2
        yield {
            "judgment_id": judgment.id,
            "prompt_id": judgment.response.prompt.external_id,
            "criterion": judgment.criterion.slug,
            "judge": judge_name(judgment),
            "source": judgment.source,
            "response_1_model": judgment.response.model.slug,
            "response_1_variant": judgment.response.variant,
            "response_1_perturbation": judgment.response.perturbation,
            "response_2_model": second.model.slug if second else "",
            "response_2_variant": second.variant if second else "",
            "score": judgment.score,
            "verdict": judgment.verdict,
            "prompt_variant": judgment.prompt_variant,
            "privileged_sources": ",".join(judgment.privileged_sources),
            "rationale": judgment.rationale,
            "created_at": judgment.created_at.isoformat(),
        }


def score_rows(benchmark: Benchmark) -> Iterator[dict[str, Any]]:
    """Scores of single original responses in the score layout (evalhub.core.files.scores), so the
    file imports again as it is (`import_scores`)."""
    scores = (
        Judgment.objects.filter(
            response__prompt__benchmark=benchmark,
            response_2__isnull=True,
            judge_model__isnull=False,
            response__parent__isnull=True,
        )
        .select_related("criterion", "judge_model", "response__model", "response__prompt")
        .order_by(
            "response__prompt_id",
            "response__model__slug",
            "response__variant",
            "judge_model__slug",
            "criterion__slug",
            "id",
        )
    )
    for judgment in scores.iterator(chunk_size=2000):
        prompt, rater = judgment.response.prompt, judgment.judge_model
        assert rater is not None  # filtered above
        yield {
            "prompt_id": prompt.external_id,
            "prompt": prompt.text,
            "category": prompt.category,
            "model": judgment.response.model.slug,
            "response_variant": judgment.response.variant,
            "response": judgment.response.text,
            "rater": rater.slug,
            "rater_kind": "human" if rater.is_human else "model",
            "criterion": judgment.criterion.slug,
            "score": judgment.score,
            "rationale": judgment.rationale,
        }


# A table is a function of a benchmark giving its rows (dicts of one shape), read by the page and
# `export_results` alike.
TABLES: Registry[Callable[[Benchmark], Iterator[dict[str, Any]]]] = Registry(
    "export table",
    docs="extending/export-tables.md",
    what="table",
    check=lambda name, rows: "" if callable(rows) else "a table is a function of a benchmark",
    entries={"responses": response_rows, "judgments": judgment_rows, "scores": score_rows},
)
EXPORT_FORMATS = ("jsonl", "csv", "hf")  # hf: a Hugging Face dataset (Parquet and its card, zipped)


def judge_name(judgment: Judgment) -> str:
    """A judge model's slug, or the person's username (a judgment has one or the other)."""
    if judgment.judge_model is not None:
        return judgment.judge_model.slug
    return f"user:{judgment.judge_user.username}" if judgment.judge_user is not None else ""


def table_file(benchmark: Benchmark, table: str, fmt: str) -> HttpResponse:
    """A benchmark's export table as a file to download (the benchmark page's links and the API's)."""
    rows = list(TABLES[table](benchmark))
    if fmt == "hf":
        return download(rows, "hf", f"{benchmark.slug}.{table}", f"benchmark {benchmark.slug}")
    content_type = "application/x-ndjson" if fmt == "jsonl" else "text/csv"
    response = HttpResponse(to_text(rows, fmt), content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{benchmark.slug}.{table}.{fmt}"'
    return response
