"""The one rule that turns what a run did into the state every page shows."""

from __future__ import annotations

from evalhub.core.runs.outcomes import FAILED, PARTIAL, SUCCEEDED, ComponentFailure, Outcome, partial_words
from evalhub.core.runs.usage import Usage


def test_a_run_succeeds_only_when_every_planned_unit_produced_a_result():
    assert Outcome(planned=10, produced=10).settle() == (SUCCEEDED, "Every one of 10 units produced a result.")
    state, sentence = Outcome(planned=10, produced=9).settle()
    assert state == PARTIAL
    assert sentence == "9 of 10 produced a result, 1 without a result."


def test_failed_and_invalid_units_make_a_run_partial_and_are_counted_in_its_sentence():
    state, sentence = Outcome(planned=10, produced=7, failed=2, invalid=1).settle()
    assert state == PARTIAL
    assert sentence == "7 of 10 produced a result, 2 failed, 1 invalid."


def test_a_run_that_produced_nothing_fails_even_when_it_planned_nothing_but_had_failures():
    assert Outcome(planned=0, produced=0, failed=3).settle() == (
        FAILED,
        "Nothing usable was produced (3 failed).",
    )
    assert Outcome(planned=5, produced=0, invalid=5).settle()[0] == FAILED
    assert Outcome(planned=5, produced=0, cause="No pair was scored: empty texts.").settle() == (
        FAILED,
        "No pair was scored: empty texts.",
    )


def test_a_component_that_failed_every_call_fails_the_run_by_name_even_when_others_produced():
    judge = ComponentFailure("Judge", "heuristic:concise", "RequestRejected: no")
    state, sentence = Outcome(planned=20, produced=10, failed=10, failed_components=(judge,)).settle()
    assert state == FAILED
    assert sentence == "Judge heuristic:concise failed every call: RequestRejected: no"


def test_a_run_with_no_units_and_no_failures_succeeds():
    assert Outcome(planned=0, produced=0).settle()[0] == SUCCEEDED


def test_partial_words_name_only_the_counts_that_are_not_zero():
    assert partial_words(3, 2) == "Finished with 3 failed / 2 invalid"
    assert partial_words(0, 4) == "Finished with 4 invalid"
    assert partial_words(1_200, 0) == "Finished with 1,200 failed"


def test_usage_adds_up_and_a_cached_call_costs_nothing():
    paid = Usage.of_call(input_tokens=100, output_tokens=20, cached=False, cost_usd=0.002)
    unpriced = Usage.of_call(input_tokens=10, output_tokens=5, cached=False, cost_usd=None)
    cached = Usage.of_call(input_tokens=100, output_tokens=20, cached=True, cost_usd=0.002)
    total = Usage.total([paid, unpriced, cached])
    assert total == Usage(
        calls=3, cached_calls=1, input_tokens=110, output_tokens=25, cost_usd=0.002, calls_without_price=1
    )
    assert total.tokens == 135


def test_usage_reads_back_what_it_stored_and_ignores_keys_it_does_not_know():
    usage = Usage(calls=2, cached_calls=1, input_tokens=5, output_tokens=6, cost_usd=0.5, calls_without_price=0)
    assert Usage.from_dict(usage.as_dict()) == usage
    assert Usage.from_dict({"calls": 4, "latency_s": 1.5}) == Usage(calls=4)
    assert Usage.from_dict(None) == Usage()
