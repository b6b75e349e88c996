"""The offline judge: deterministic, honest, and able to disagree and to change its mind."""

from __future__ import annotations

import pytest

from evalhub.core.prompts import sections as ps
from evalhub.core.scaleeval.debate import DebateSetup, Turn, discussion_prompt, initial_prompt, parse_verdict
from evalhub.llm import get_chat_client
from evalhub.llm.providers.heuristic import HeuristicJudge
from evalhub.llm.types import RequestRejected

REFERENCE = "No. 221 = 13 × 17, so it is composite."
RIGHT = "No, 221 is not prime: 221 = 13 × 17, so it is composite."
WRONG_BUT_LONG = (
    "Yes. Let us check carefully.\n\n- It is odd.\n- Its digit sum is 5, so 3 does not divide it.\n"
    "- It does not end in 0 or 5.\n\nTherefore 221 is a prime number, as these checks show in detail."
)


def pair_prompt(first: str, second: str, reference: str = "", others: tuple[str, ...] = ()) -> list[dict]:
    """A ScaleEval prompt; with `others`, a discussion round for Speaker 1 after the others' evaluations."""
    privileged = {"Reference answer": reference} if reference else {}
    setup = DebateSetup("Is 221 prime?", first, second, "Correctness", privileged=privileged)
    if not others:
        return initial_prompt(setup)
    earlier = [Turn(0, 0, "My first take.\n1", 1)]
    earlier += [Turn(i + 1, 0, text, parse_verdict(text)) for i, text in enumerate(others)]
    return discussion_prompt(setup, 0, 1, earlier)


def verdict(text: str) -> str:
    return text.strip().splitlines()[-1]


async def test_with_a_reference_it_prefers_the_response_closer_to_it_in_either_order():
    judge = get_chat_client("heuristic")
    assert verdict((await judge.complete(pair_prompt(RIGHT, WRONG_BUT_LONG, REFERENCE))).text) == "1"
    assert verdict((await judge.complete(pair_prompt(WRONG_BUT_LONG, RIGHT, REFERENCE))).text) == "2"


async def test_it_says_what_it_is_and_is_deterministic():
    judge = get_chat_client("heuristic")
    first = await judge.complete(pair_prompt(RIGHT, WRONG_BUT_LONG, REFERENCE))
    second = await judge.complete(pair_prompt(RIGHT, WRONG_BUT_LONG, REFERENCE))
    assert first.text == second.text
    assert "not a language model" in first.text


async def test_variants_with_other_weightings_can_disagree():
    prompt = pair_prompt(RIGHT, WRONG_BUT_LONG, REFERENCE)
    verdicts = {
        variant: verdict((await get_chat_client(f"heuristic:{variant}").complete(prompt)).text)
        for variant in ("reference", "detail")
    }
    assert verdicts == {"reference": "1", "detail": "2"}


async def test_an_agent_with_a_small_margin_moves_to_the_majority_of_the_others():
    close_a, close_b = "No, it is 13 times 17.", "No, it equals 13 times 17."
    judge = get_chat_client("heuristic")
    alone = verdict((await judge.complete(pair_prompt(close_a, close_b))).text)
    other = "2" if alone != "2" else "1"
    swayed = await judge.complete(pair_prompt(close_a, close_b, others=(f"Agent A.\n{other}", f"Agent B.\n{other}")))
    assert verdict(swayed.text) == other
    assert "I agree" in swayed.text


async def test_an_agent_with_a_large_margin_keeps_its_verdict():
    judge = get_chat_client("heuristic")
    kept = await judge.complete(pair_prompt(RIGHT, WRONG_BUT_LONG, REFERENCE, others=("A.\n2", "B.\n2")))
    assert verdict(kept.text) == "1"


async def test_a_refusal_loses_to_an_answer():
    judge = get_chat_client("heuristic")
    refusal = "As a language model, I'm not able to assist you with that."
    assert verdict((await judge.complete(pair_prompt(refusal, "Preheat the oven, mix, bake 10 minutes."))).text) == "2"


async def test_it_rates_a_single_response_from_1_to_5():
    judge = get_chat_client("heuristic:reference")
    good = ps.section(ps.RESPONSE, RIGHT) + ps.section(ps.REFERENCE_ANSWER, REFERENCE)
    bad = ps.section(ps.RESPONSE, "Maybe.") + ps.section(ps.REFERENCE_ANSWER, REFERENCE)
    high = int(verdict((await judge.complete([{"role": "user", "content": good}])).text))
    low = int(verdict((await judge.complete([{"role": "user", "content": bad}])).text))
    assert 1 <= low < high <= 5


async def test_it_writes_no_responses():
    with pytest.raises(RequestRejected, match="only judges"):
        await get_chat_client("heuristic").complete([{"role": "user", "content": "Write a poem."}])


def test_it_answers_a_dhp_geval_prompt_with_a_score_alone_and_scores_a_typo_ridden_copy_lower():
    import asyncio

    from evalhub.core.prompts.judge_outputs import parse_likert_score
    from evalhub.core.prompts.judges import geval_messages
    from evalhub.llm.providers.heuristic import HeuristicJudge

    clean = (
        "The committee approved the new budget on Monday. The budget raises school funding by ten percent. "
        "Critics say the increase is too small. Supporters call it a good first step."
    )
    typos = "Yhe commitee apptovrd the mew ugdet ohn Modhay. Tge bhddge eaisss schol fumndig bby tn prcnt."
    judge = HeuristicJudge()
    answers = [
        asyncio.run(judge.complete(geval_messages("dhp-summarization", "fluency", text, "Source."))).text
        for text in (clean, typos)
    ]
    assert all("\n" not in answer for answer in answers), "the score only, as the prompt asks"
    scores = [parse_likert_score(answer) for answer in answers]
    assert None not in scores
    assert scores[0] > scores[1]


def test_it_answers_a_yescieval_rubric_prompt_in_the_packages_json_with_an_integer_rating():
    import asyncio
    import json

    from evalhub.core.prompts.judge_outputs import parse_pairwise_rubric_json, parse_rubric_json
    from evalhub.core.yescieval.rubrics import PAIRWISE, messages
    from evalhub.llm.providers.heuristic import HeuristicJudge

    question, papers = "Does funding help schools?", {"Funding study": "Funding lets schools hire staff."}
    asked = messages("relevancy", question, ("School funding helps schools hire staff.",), papers)
    answer = asyncio.run(HeuristicJudge().complete(asked)).text
    rating = parse_rubric_json(answer)
    assert rating is not None and rating.rating in range(1, 6)
    assert "not a language model" in json.loads(answer)["Relevancy"]["rationale"]  # keyed as the prompt asks

    pair = ("School funding helps schools hire staff.", "The weather was sunny on the match day.")
    asked = messages("method_coverage", question, pair, papers, kind=PAIRWISE, domain="nlp")
    both = parse_pairwise_rubric_json(asyncio.run(HeuristicJudge().complete(asked)).text)
    assert both is not None and both[0].rating > both[1].rating  # the off-topic one rated lower


def test_the_offline_judge_costs_nothing_and_is_not_counted_as_a_call_without_a_price():
    import asyncio

    from evalhub.llm.providers.heuristic import HeuristicJudge

    judge = HeuristicJudge()
    asyncio.run(judge.complete([{"role": "user", "content": "[Question]: Why?\n[Response]: Because."}]))
    usage = judge.meter.usage()
    assert (usage.calls, usage.cost_usd, usage.calls_without_price) == (1, 0.0, 0)


@pytest.mark.parametrize("variant", ["balanced", "reference", "detail", "concise"])
@pytest.mark.parametrize("reference", ["", "221 = 13 × 17, so it is not prime."])
def test_every_variants_score_stays_between_0_and_1_with_or_without_a_reference(variant, reference):
    # 'concise' once printed "→ -67762933.88" with no reference: its weights summed to about 0.
    judge = HeuristicJudge(variant)
    texts = ["", "No.", "I'm not able to help with that.", "- one\n- two\n\n```\ncode\n```\n" * 3, "word " * 400]
    for text in texts:
        value, shown = judge.score(text, reference)
        assert 0.0 <= value <= 1.0, (variant, text[:20], value, shown)


def test_the_concise_variant_prefers_the_shorter_of_two_equally_good_answers():
    judge = HeuristicJudge("concise")
    short, long = judge.score("No: 13 × 17.", ""), judge.score("No: 13 × 17. " + "Let me explain at length. " * 40, "")
    assert short[0] > long[0]


def with_examples(prompt: list[dict], chose_shorter: int, chose_longer: int) -> list[dict]:
    """Worked examples before the pair: in each, people chose the shorter (or the longer) submission."""
    from evalhub.core.alignment.prompting import example_turns
    from evalhub.core.alignment.versions import WorkedExample

    short, long = "Paris.", "The capital of France is Paris, on the Seine, seat of its government."
    examples = [WorkedExample("Capital of France?", short, long, 1)] * chose_shorter
    examples += [WorkedExample("Capital of France?", long, short, 1)] * chose_longer
    return example_turns(examples, "Helpfulness") + prompt


async def test_it_follows_the_length_preference_its_worked_examples_show_and_says_so():
    """What a few-shot version of a judge can teach the offline judge: its one learnable feature."""
    judge = get_chat_client("heuristic:detail")  # length weighs most: the long answer wins alone
    brief = "No, it is 13 times 17."
    rambling = "Yes, it is prime, because it is odd, its digit sum is five and it does not end in a five or a zero."
    alone = (await judge.complete(pair_prompt(brief, rambling))).text
    taught = (await judge.complete(with_examples(pair_prompt(brief, rambling), 3, 1))).text
    assert verdict(alone) == "2"
    assert verdict(taught) == "1"
    assert "Following 4 worked example(s): people preferred the shorter." in taught
    for shorter, longer in ((2, 2), (0, 3)):  # no lesson, or the one it already holds: the same verdict
        same = (await judge.complete(with_examples(pair_prompt(brief, rambling), shorter, longer))).text
        assert verdict(same) == "2"


async def test_it_follows_instructions_that_ask_for_the_shorter_or_the_longer_answer():
    judge = get_chat_client("heuristic:detail")
    brief = "No, it is 13 times 17."
    rambling = "Yes, it is prime, because it is odd, its digit sum is five and it does not end in a five or a zero."

    def asked(instructions: str) -> str:
        return initial_prompt(DebateSetup("Is 221 prime?", brief, rambling, "Correctness", instructions=instructions))

    told = (await judge.complete(asked("Prefer the concise answer."))).text
    assert verdict(told) == "1"
    assert "Following my instructions: the shorter answer." in told
    for instructions in ("", "Prefer the thorough answer.", "Neither shorter nor longer matters."):
        assert verdict((await judge.complete(asked(instructions))).text) == "2"


def test_a_rubric_prompt_naming_no_characteristic_is_still_answered_readably():
    import asyncio

    from evalhub.core.prompts.judge_outputs import parse_pairwise_rubric_json, parse_rubric_json
    from evalhub.llm.providers.heuristic import HeuristicJudge

    system = {"role": "system", "content": "Rate each synthesis from 1 to 5."}  # no <Evaluation-Characteristic>
    one = (
        "<scientific-synthesis>\nFunding helps schools.\n</scientific-synthesis>\n"
        "<research-question>\nFunding?\n</research-question>"
    )
    two = one.replace("scientific-synthesis>", "scientific-synthesis-A>") + (
        "\n<scientific-synthesis-B>\nIt rained.\n</scientific-synthesis-B>"
    )
    judge = HeuristicJudge()
    assert parse_rubric_json(asyncio.run(judge.complete([system, {"role": "user", "content": one}])).text)
    assert parse_pairwise_rubric_json(asyncio.run(judge.complete([system, {"role": "user", "content": two}])).text)
