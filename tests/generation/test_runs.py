from __future__ import annotations

import pytest

from evalhub.catalog.models import Response
from evalhub.core.privileged.hints import RULE_BASED
from evalhub.generation.actions import (
    GenerationRejected,
    do_create_generation_run,
    do_edit_hints,
    do_register_candidate,
)
from evalhub.generation.config import GenerationConfig
from evalhub.generation.models import GenerationRun, PromptHints, PromptTemplate
from evalhub.jobs.chunks import pending_chunk_ids
from evalhub.jobs.runners import work_chunk
from evalhub.llm.testing import Fail
from tests.generation.conftest import spec


def run_here(chunk_prompts=None, **fields):
    run = do_create_generation_run(GenerationConfig(**fields), chunk_prompts=chunk_prompts, enqueue=False)
    for chunk_id in pending_chunk_ids(run.job):
        work_chunk(chunk_id)
    run.refresh_from_db()
    run.job.refresh_from_db()
    return run


def test_every_candidate_answers_every_prompt_at_every_tier_tagged_with_template_tier_and_run(
    maths, server, candidates, answer_template
):
    run = run_here(
        benchmark=maths["benchmark"],
        candidates=candidates,
        template=answer_template,
        tiers=[0, 1, 2],
        hint_maker=RULE_BASED,
        hint_count=2,
    )
    assert run.job.status == "succeeded", run.job.error
    made = Response.objects.filter(model__in=candidates)
    # two prompts with a reference × 3 tiers + the essay at tier 0 only, for each of the two candidates
    assert made.count() == run.made == 2 * (2 * 3 + 1)
    assert sorted(made.filter(prompt=maths["prompts"]["essay"]).values_list("variant", flat=True)) == [
        "answer:0h",
        "answer:0h",
    ]
    tier2 = made.get(prompt=maths["prompts"]["sum"], model=candidates[0], variant="answer:2h")
    assert tier2.metadata["generation_run"] == run.pk
    assert (tier2.metadata["template"], tier2.metadata["hint_tier"]) == ("answer", 2)
    assert tier2.text.startswith("strong thinks with 2 hints")
    # The essay has no reference: no hints, reported, not failed.
    [issue] = run.job.row_issues.filter(stage="hints")
    assert issue.prompt == maths["prompts"]["essay"]
    assert "No reference solution" in issue.message


def test_tier_t_shows_exactly_the_first_t_hints_which_never_contain_the_final_answer(
    maths, server, candidates, answer_template
):
    run_here(
        benchmark=maths["benchmark"],
        candidates=candidates[:1],
        template=answer_template,
        tiers=[0, 1, 2, 3],
        hint_maker=RULE_BASED,
        hint_count=3,
    )
    hints = PromptHints.objects.get(prompt=maths["prompts"]["half"])
    assert len(hints.hints) == 3
    assert hints.leaks == []
    assert hints.maker == RULE_BASED
    asked = {
        r["body"]["messages"][-1]["content"]
        for r in server.state.requests
        if "one half" in r["body"]["messages"][-1]["content"]
    }
    for tier in range(4):
        prompt = next(text for text in asked if text.count("\nHint ") == tier)
        assert all(f"Hint {n}: {hints.hints[n - 1]}" in prompt for n in range(1, tier + 1))
        assert "frac{1}{2}" not in prompt


def test_llm_hints_follow_figure_9_and_a_planted_leak_is_flagged_and_kept_from_candidates(
    maths, server, candidates, answer_template
):
    leaky = maths["prompts"]["sum"]
    leaky.text = "What is 40 + 2? LEAK"
    leaky.save()
    run = run_here(
        benchmark=maths["benchmark"],
        candidates=candidates[:1],
        template=answer_template,
        tiers=[0, 1, 3],
        hint_maker=spec(server, "hinter"),
        hint_count=3,
    )
    record = PromptHints.objects.get(prompt=leaky)
    assert record.leaks == [3]
    assert not record.usable
    assert record.final_answer == "42"
    assert PromptHints.objects.get(prompt=maths["prompts"]["half"]).leaks == []
    # Only tier 0 for the leaky prompt; the other gets every tier.
    variants = Response.objects.filter(prompt=leaky, model=candidates[0]).values_list("variant", flat=True)
    assert list(variants) == ["answer:0h"]
    assert Response.objects.filter(prompt=maths["prompts"]["half"], model=candidates[0]).count() == 3
    assert run.job.row_issues.filter(
        stage="hints", prompt=leaky, message__contains="contains the final answer"
    ).exists()
    hint_requests = [r for r in server.state.requests if r["body"]["model"] == "hinter"]
    assert len(hint_requests) == 2
    assert "write 3 partial solutions" in hint_requests[0]["body"]["messages"][0]["content"]

    # An admin rewrites the leaking hint; the next run generates the missing tiers and keeps the rest.
    do_edit_hints(record, hints=[*record.hints[:2], "Now add the two results."], accept_leaks=False, by=None)
    again = run_here(
        benchmark=maths["benchmark"],
        candidates=candidates[:1],
        template=answer_template,
        tiers=[0, 1, 3],
        hint_maker=spec(server, "hinter"),
        hint_count=3,
    )
    assert (again.made, again.found) == (2, 5)  # sum: 0h kept; half: 3 kept; essay: 0h kept
    hint_calls = [r for r in server.state.requests if r["body"]["model"] == "hinter"]
    assert len(hint_calls) == 2  # hints are stored, not asked for again
    assert Response.objects.get(prompt=leaky, model=candidates[0], variant="answer:3h").metadata["hints_sha"]


def test_an_edit_that_still_gives_the_answer_away_stays_flagged_unless_accepted(maths, server, answer_template):
    record = PromptHints.objects.create(
        prompt=maths["prompts"]["sum"], maker="x", prompt_version="v", hints=["a", "b"], final_answer="42"
    )
    edited = do_edit_hints(record, hints=["a", "so it is 42"], accept_leaks=False, by=None)
    assert edited.leaks == [2]
    assert not edited.usable
    accepted = do_edit_hints(record, hints=["a", "so it is 42"], accept_leaks=True, by=None)
    assert accepted.usable
    with pytest.raises(GenerationRejected, match="Every hint needs text"):
        do_edit_hints(record, hints=["a", "  "], accept_leaks=False, by=None)


def test_a_resumed_or_repeated_run_skips_the_responses_that_exist(maths, server, candidates, answer_template):
    fields = {
        "benchmark": maths["benchmark"],
        "candidates": candidates,
        "template": answer_template,
        "tiers": [0, 1],
        "hint_maker": RULE_BASED,
        "hint_count": 1,
    }
    first = run_here(**fields)
    calls = server.request_count
    second = run_here(**fields)
    assert (second.made, second.found, second.calls) == (0, first.made, 0)
    assert server.request_count == calls
    Response.objects.filter(model=candidates[1], variant="answer:1h", prompt=maths["prompts"]["sum"]).delete()
    third = run_here(**fields)
    assert (third.made, third.found, third.calls) == (1, first.made - 1, 1)


def test_a_provider_error_on_one_item_is_reported_and_the_run_finishes_partial_not_succeeded(
    maths, server, candidates, answer_template
):
    server.fail_next(Fail(400, message="context length exceeded"))
    run = run_here(benchmark=maths["benchmark"], candidates=candidates[:1], template=answer_template, tiers=[0])
    assert run.job.status == "partial"
    assert run.job.status_words == "Finished with 1 failed"
    assert run.made == 2
    [issue] = run.job.row_issues.filter(stage="generation")
    assert "context length exceeded" in issue.message
    assert issue.label.endswith("No hint")


def test_samples_are_separate_responses_and_usage_is_summed(maths, server, candidates, answer_template):
    run = run_here(
        benchmark=maths["benchmark"],
        candidates=candidates[:1],
        template=answer_template,
        tiers=[0],
        samples=2,
        temperature=0.7,
    )
    variants = Response.objects.filter(model=candidates[0], prompt=maths["prompts"]["sum"]).values_list("variant")
    assert sorted(v for (v,) in variants) == ["answer:0h", "answer:0h:s1"]
    assert run.calls == 6
    assert run.input_tokens > 0
    assert run.output_tokens > 0


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"tiers": [0, 2], "hint_count": 1, "hint_maker": RULE_BASED}, "Tier 2 needs 2 hints"),
        ({"tiers": [0, 1]}, "Hint tiers need a hint maker"),
        ({"tiers": [0], "answer_match": "fuzzy"}, "Answer matching is one of"),
        ({"tiers": [0], "samples": 0}, "Samples per prompt"),
    ],
)
def test_a_run_that_cannot_work_is_refused_before_it_starts(
    maths, server, candidates, answer_template, fields, message
):
    with pytest.raises(GenerationRejected, match=message):
        do_create_generation_run(
            GenerationConfig(benchmark=maths["benchmark"], candidates=candidates, template=answer_template, **fields),
            enqueue=False,
        )


def test_a_template_with_an_unknown_placeholder_cannot_be_saved_by_any_path(db):
    from django.core.exceptions import ValidationError

    from evalhub.generation.actions import do_save_template

    with pytest.raises(ValidationError, match="unknown placeholder"):
        PromptTemplate.objects.create(slug="bad", name="Bad", user="Solve {question}")
    with pytest.raises(GenerationRejected, match="unknown placeholder"):
        do_save_template(slug="bad", name="Bad", system="", user="Solve {question}")
    assert not PromptTemplate.objects.filter(slug="bad").exists()
    assert do_save_template(slug="good", name="Good", system="", user="Solve {prompt}").user == "Solve {prompt}"


def test_a_hints_only_run_makes_the_hints_for_review_and_generates_nothing(maths, server, answer_template):
    run = run_here(
        benchmark=maths["benchmark"],
        candidates=[],
        template=answer_template,
        tiers=[1, 2],
        hint_maker=RULE_BASED,
        hint_count=2,
    )
    assert run.job.status == "succeeded"
    assert run.job.title == "Hints for Maths"
    assert PromptHints.objects.filter(prompt__benchmark=maths["benchmark"]).count() == 2
    assert run.made == 0
    assert server.request_count == 0


def test_a_cancelled_run_stops_at_the_next_chunk_and_keeps_what_it_made(maths, server, candidates, answer_template):
    from evalhub.jobs.actions import do_request_stop
    from evalhub.jobs.models import StopRequest

    run = do_create_generation_run(
        GenerationConfig(
            benchmark=maths["benchmark"],
            candidates=candidates[:1],
            template=answer_template,
            tiers=[0],
        ),
        chunk_prompts=1,
        enqueue=False,
    )
    first, *rest = pending_chunk_ids(run.job)
    assert work_chunk(first) == "recorded"
    do_request_stop(run.job, StopRequest.CANCEL)
    assert [work_chunk(pk) for pk in rest] == ["cancelled", "cancelled"]
    run.job.refresh_from_db()
    assert run.job.status == "cancelled"
    assert Response.objects.filter(model=candidates[0]).count() == 1


def test_local_models_go_to_the_gpu_workers_and_api_models_to_the_default_queue(maths, server, answer_template):
    from evalhub.generation.actions import generation_queue

    local = do_register_candidate("transformers:/models/tiny")
    api = do_register_candidate(spec(server, "strong"))
    runs = [
        do_create_generation_run(
            GenerationConfig(benchmark=maths["benchmark"], candidates=chosen, template=answer_template),
            enqueue=False,
        )
        for chosen in ([api], [api, local])
    ]
    assert [generation_queue(run) for run in runs] == ["default", "gpu"]


def test_the_built_in_templates_exist_after_migrating(db):
    assert set(PromptTemplate.objects.filter(builtin=True).values_list("slug", flat=True)) == {
        "answer",
        "gre-bench-review",
    }


def test_chunks_hold_about_forty_calls_so_progress_moves_and_workers_share_a_run(
    maths, server, candidates, answer_template
):
    run = do_create_generation_run(
        GenerationConfig(
            benchmark=maths["benchmark"],
            candidates=candidates,
            template=answer_template,
            tiers=[0, 1, 2, 3],
            hint_maker=RULE_BASED,
            samples=3,
        ),
        enqueue=False,
    )
    # 2 candidates × 4 tiers × 3 samples = 24 calls per prompt: one prompt per chunk
    assert [len(c.unit_ids) for c in run.job.chunks.all()] == [1, 1, 1]
    assert [c.units_planned for c in run.job.chunks.all()] == [24, 24, 24]


def test_an_answer_cut_at_the_token_limit_is_kept_and_reported(maths, server, candidates, answer_template):
    server.state.honour_max_tokens = True
    run = run_here(
        benchmark=maths["benchmark"], candidates=candidates[:1], template=answer_template, tiers=[0], max_tokens=4
    )
    assert run.made == 3
    cut = run.job.row_issues.filter(stage="generation", message__contains="stopped at the token limit (4)")
    assert sorted(cut.values_list("prompt__external_id", flat=True)) == ["half", "sum"]  # the essay fits in 4
    response = Response.objects.get(model=candidates[0], prompt=maths["prompts"]["sum"])
    assert response.metadata["finish_reason"] == "length"
    assert len(response.text.split()) == 4


def test_a_spec_names_one_model_created_once_with_a_slug_from_its_name(db):
    from evalhub.catalog.models import LanguageModel
    from evalhub.generation.actions import candidate_model

    assert candidate_model("openai:gpt-4o-mini").pk is None
    assert not LanguageModel.objects.exists()
    first = do_register_candidate("openai:gpt-4o-mini")
    assert (first.slug, first.provider, first.model_id) == ("gpt-4o-mini", "openai", "gpt-4o-mini")
    assert do_register_candidate("openai:gpt-4o-mini") == first == candidate_model("openai:gpt-4o-mini")
    local = do_register_candidate("transformers:/models/gpt-4o-mini")
    served = do_register_candidate("openai-compatible:http://127.0.0.1:8001/v1|meta-llama/Llama-3.1-8B")
    assert (local.slug, served.slug) == ("gpt-4o-mini-2", "llama-3-1-8b")
    assert served.display_name == "meta-llama/Llama-3.1-8B"


@pytest.mark.django_db(transaction=True)
def test_cancel_mid_chunk_stops_between_calls_and_stores_none_of_the_chunk(maths, server, candidates, answer_template):
    import random

    from django.test import override_settings

    from evalhub.jobs.models import Job
    from tests.jobs.helpers import stop_once_calls_flow

    server.state.latency_s = 0.05
    run = do_create_generation_run(
        GenerationConfig(
            benchmark=maths["benchmark"],
            candidates=candidates,
            template=answer_template,
            tiers=[0],
            samples=8,
            temperature=0.7,
            seed=random.randrange(10**9),
        ),
        chunk_prompts=3,
        enqueue=False,
    )
    [chunk] = pending_chunk_ids(run.job)

    canceller = stop_once_calls_flow(server, run.job_id, "cancel", after=4)
    with override_settings(EVALHUB_HEARTBEAT_SECONDS=0.05):
        assert work_chunk(chunk) == "cancel"
    canceller.join()
    job = Job.objects.get(pk=run.job_id)
    assert job.status == "cancelled"
    assert job.message == "Cancelled before anything was done."
    assert not Response.objects.filter(model__in=candidates).exists(), "nothing of the stopped chunk is stored"
    assert server.request_count < 3 * 8 * 2, "no call started long after the cancel"


def test_a_candidate_that_failed_every_call_fails_the_run_naming_it(maths, server, candidates, answer_template):
    server.state.api_key = "rotated"  # every call is refused: 401
    run = run_here(benchmark=maths["benchmark"], candidates=candidates[:1], template=answer_template, tiers=[0])
    from evalhub.generation.config import spec_of

    assert run.job.status == "failed"
    assert run.job.message.startswith(f"Candidate {spec_of(candidates[0])} failed every call: ")
    assert "401" in run.job.message or "rejected" in run.job.message
    assert run.made == 0


def test_the_configuration_is_stored_once_and_read_back_as_it_was_given(maths, candidates, answer_template):
    config = GenerationConfig(
        benchmark=maths["benchmark"],
        candidates=list(reversed(candidates)),
        template=answer_template,
        tiers=[2, 0, 2, 1],
        hint_count=2,
        hint_maker=RULE_BASED,
        samples=2,
        anchor=candidates[0],
        prompt_ids=[maths["prompts"]["sum"].pk],
    )
    run = do_create_generation_run(config, enqueue=False)
    assert run.job.params == {}
    assert config.tiers == (0, 1, 2)
    assert GenerationConfig.of_run(GenerationRun.objects.get(pk=run.pk)) == config
