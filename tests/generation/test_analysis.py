from __future__ import annotations

import pytest
from django.urls import reverse

from evalhub.catalog.demo import do_load_builtin_criteria
from evalhub.catalog.models import Criterion, Response
from evalhub.core.privileged.hints import RULE_BASED
from evalhub.debates.actions import do_create_run
from evalhub.debates.models import Debate, DebateStatus, Winner
from evalhub.generation.analysis import tier_analysis
from tests.generation.test_runs import run_here


@pytest.fixture
def tiered(maths, server, candidates, answer_template):
    strong, weak = candidates
    run = run_here(
        benchmark=maths["benchmark"],
        candidates=candidates,
        template=answer_template,
        tiers=[0, 1, 2],
        hint_maker=RULE_BASED,
        hint_count=2,
        anchor=weak,
    )
    return {"run": run, "strong": strong, "weak": weak, **maths}


def debates_at(tiered, variant: str) -> list[Debate]:
    do_load_builtin_criteria()
    run = do_create_run(
        name=variant,
        benchmark=tiered["benchmark"],
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=tiered["strong"],
        model_b=tiered["weak"],
        variant=variant,
        agents=["heuristic"],
    )
    return list(run.debates.order_by("prompt__external_id"))


def settle(debate: Debate, winner: str, status: str = DebateStatus.CONSENSUS) -> None:
    verdict = {Winner.A: 1, Winner.B: 2, Winner.TIE: 0}[winner]
    Debate.objects.filter(pk=debate.pk).update(status=status, winner=winner, verdict=verdict)


def test_accuracy_per_model_and_tier_counts_final_answers_against_the_reference(tiered):
    # The fake candidates: strong answers right from 1 hint on, weak from 2; the essay has no final answer.
    accuracy = tier_analysis(tiered["run"])["accuracy"]
    assert accuracy["tiers"] == ["No hint", "1 hint", "2 hints"]
    rows = {row["model"]: row for row in accuracy["rows"]}
    assert [c.mean for c in rows[tiered["strong"].slug]["cells"]] == [0.0, 1.0, 1.0]
    assert [c.mean for c in rows[tiered["weak"].slug]["cells"]] == [0.0, 0.0, 1.0]
    assert rows[tiered["strong"].slug]["overall"].mean == pytest.approx(4 / 6)
    assert all(c.n == 2 for c in rows[tiered["weak"].slug]["cells"])
    no_hint, one_hint, two_hints = accuracy["separability"]
    assert (no_hint.separated, one_hint.separated, two_hints.separated) == (0, 1, 0)
    assert one_hint.widest.gap == 1.0
    assert tiered["run"].job.result["accuracy"][f"{tiered['strong'].slug} · 1 hint"]["mean"] == 1.0


def test_win_rates_against_the_anchor_use_only_decided_pairs_within_one_tier(tiered):
    assert tier_analysis(tiered["run"])["win_rate"] is None
    sum_1h, half_1h = debates_at(tiered, "answer:1h")
    settle(half_1h, Winner.TIE, DebateStatus.ADJUDICATED)
    settle(sum_1h, Winner.A)
    for debate in debates_at(tiered, "answer:0h"):
        settle(debate, Winner.B)
    across = Debate.objects.create(
        run=sum_1h.run,
        prompt=tiered["prompts"]["sum"],
        swapped=False,
        status=DebateStatus.CONSENSUS,
        winner=Winner.A,
        verdict=1,
        response_a=Response.objects.get(model=tiered["strong"], prompt=tiered["prompts"]["sum"], variant="answer:2h"),
        response_b=Response.objects.get(model=tiered["weak"], prompt=tiered["prompts"]["sum"], variant="answer:0h"),
    )
    assert across.pk

    analysis = tier_analysis(tiered["run"])  # recomputed: the settled debates changed the data
    [row] = analysis["win_rate"]["rows"]  # the anchor has no row against itself
    assert row["model"] == tiered["strong"].slug
    no_hint, one_hint, two_hints = row["cells"]
    assert (no_hint.mean, no_hint.n) == (0.0, 3)
    assert (one_hint.mean, one_hint.n) == (0.75, 2)  # a win and a tie (counting half)
    assert two_hints is None
    assert row["overall"].mean == pytest.approx(1.5 / 5)
    assert analysis["battles"] == {"consensus": 4, "human": 1}

    consensus_only = tier_analysis(tiered["run"], ("consensus",))["win_rate"]["rows"][0]["cells"][1]
    assert (consensus_only.mean, consensus_only.n) == (1.0, 1)


def test_the_run_page_lays_win_rates_out_like_table_3_and_filters_sources(tiered, client, login, viewer):
    sum_1h, half_1h = debates_at(tiered, "answer:1h")
    settle(sum_1h, Winner.A)
    settle(half_1h, Winner.TIE, DebateStatus.ADJUDICATED)
    login(viewer)
    url = reverse("generation_results", args=[tiered["run"].job_id])
    page = client.get(url).content.decode()
    table = page.split("Win rate against weak per hint tier", 1)[1].split("</table>", 1)[0]
    assert "Model vs weak" in table
    assert ">strong<" in table
    assert "75%" in table
    assert "n=2" in table  # 1 hint: a win and a tie
    only_people = client.get(url, {"source": "human"}).content.decode()
    table = only_people.split("Win rate against weak per hint tier", 1)[1].split("</table>", 1)[0]
    assert "50%" in table
    assert "n=1" in table
    assert "75%" not in table


def test_a_debate_run_on_a_tier_variant_pairs_the_responses_of_that_tier(tiered):
    debates = debates_at(tiered, "answer:2h")
    assert {d.response_a.variant for d in debates} == {d.response_b.variant for d in debates} == {"answer:2h"}
    assert len(debates) == 2  # the essay has tier 0 only


def test_responses_made_with_hints_edited_since_are_counted_on_the_run_page(tiered, client, login, viewer):
    from evalhub.generation.actions import do_edit_hints
    from evalhub.generation.models import PromptHints

    assert tier_analysis(tiered["run"])["stale_hints"] == 0
    record = PromptHints.objects.get(prompt=tiered["prompts"]["half"])
    do_edit_hints(record, hints=[record.hints[0], "A clearer second hint."], accept_leaks=False, by=None)
    # tier 1 still shows the unchanged first hint; tier 2 responses (one per candidate) saw the old second
    assert tier_analysis(tiered["run"])["stale_hints"] == 2
    login(viewer)
    page = client.get(reverse("generation_results", args=[tiered["run"].job_id])).content.decode()
    assert "2 responses were made with hints that have been edited since" in page


def test_single_llm_judges_on_a_tier_count_as_battles_with_the_majority_of_their_samples(tiered):
    from evalhub.debates.models import JudgeRun, JudgeVerdict

    sum_2h, half_2h = debates_at(tiered, "answer:2h")
    judge = JudgeRun.objects.create(reference=sum_2h.run, judge="openai:gpt-4o-mini", check_position=False)
    # Verdicts are in the order shown; set before any is stored (a debate's order never changes).
    Debate.objects.filter(pk=sum_2h.pk).update(swapped=False)  # shown as (strong, weak): 1 = strong won
    Debate.objects.filter(pk=half_2h.pk).update(swapped=True)  # shown as (weak, strong): 2 = strong won
    for debate, samples in ((sum_2h, [1, 1, 2]), (half_2h, [2, 2, 0])):
        for n, verdict in enumerate(samples):
            JudgeVerdict.objects.create(
                judge_run=judge, debate=debate, reversed_order=False, sample=n, text="…", verdict=verdict
            )
    cell = tier_analysis(tiered["run"], ("single_judge",))["win_rate"]["rows"][0]["cells"][2]
    assert (cell.n, cell.mean) == (2, 1.0)
    assert tier_analysis(tiered["run"], ("consensus", "human"))["win_rate"] is None
