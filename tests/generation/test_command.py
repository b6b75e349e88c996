from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from evalhub.catalog.models import Response
from evalhub.generation.models import GenerationRun
from tests.generation.conftest import spec


def test_generate_responses_runs_here_and_prints_counts_and_accuracy_per_tier(maths, server):
    out = io.StringIO()
    call_command(
        "generate_responses",
        "maths",
        "--candidate",
        spec(server, "strong"),
        "--tiers",
        "0,1",
        "--hint-maker",
        "reference-prefix",
        "--hints",
        "1",
        stdout=out,
    )
    text = out.getvalue()
    run = GenerationRun.objects.get()
    assert f"Generation run {run.pk}" in text
    assert "5 responses generated" in text
    assert "accuracy strong · No hint: 0.0%" in text
    assert "accuracy strong · 1 hint: 100.0%" in text
    assert Response.objects.filter(variant="answer:1h").count() == 2


def test_generate_responses_says_what_is_wrong_before_creating_anything(maths, server):
    with pytest.raises(CommandError, match="no template 'cot'; there are: .*answer"):
        call_command("generate_responses", "maths", "--candidate", spec(server, "strong"), "--template", "cot")
    with pytest.raises(CommandError, match="Tier 3 needs 3 hints"):
        call_command(
            "generate_responses",
            "maths",
            "--candidate",
            spec(server, "strong"),
            "--tiers",
            "0,3",
            "--hints",
            "2",
            "--hint-maker",
            "reference-prefix",
        )
    with pytest.raises(CommandError, match="Did you mean 'openai'"):
        call_command("generate_responses", "maths", "--candidate", "opena:gpt-4o")
    assert not GenerationRun.objects.exists()


def test_a_dry_run_counts_the_calls_it_would_make_and_creates_nothing(maths, server):
    from evalhub.generation.actions import do_register_candidate

    strong = do_register_candidate(spec(server, "strong"))
    Response.objects.create(prompt=maths["prompts"]["sum"], model=strong, variant="answer:0h", text="Made before.")
    out = io.StringIO()
    call_command(
        "generate_responses",
        "maths",
        "--candidate",
        "strong",
        "--tiers",
        "0,1",
        "--samples",
        "2",
        "--hint-maker",
        "reference-prefix",
        "--dry-run",
        stdout=out,
    )
    # 3 prompts × 2 tiers × 2 samples = 12; the essay has no reference (its 2 tier-1 samples go); 1 found
    assert "9 calls to make, 1 response found already, 1 prompt without a reference gets tier 0 only" in out.getvalue()
    assert not GenerationRun.objects.exists()
    assert server.request_count == 0


def test_a_run_on_a_subset_answers_only_the_named_prompts_and_names_unknown_ones(maths, server):
    call_command(
        "generate_responses",
        "maths",
        "--candidate",
        spec(server, "strong"),
        "--prompts",
        "sum, half",
        stdout=io.StringIO(),
    )
    run = GenerationRun.objects.get()
    assert sorted(Response.objects.values_list("prompt__external_id", flat=True)) == ["half", "sum"]
    assert len(run.prompt_ids) == 2
    assert run.job.progress_total == 2
    with pytest.raises(CommandError, match="Maths has no prompt nope"):
        call_command("generate_responses", "maths", "--candidate", "strong", "--prompts", "sum nope")
    with pytest.raises(CommandError, match="No prompt of Maths is in the category 'poetry'"):
        call_command("generate_responses", "maths", "--candidate", "strong", "--category", "poetry")
