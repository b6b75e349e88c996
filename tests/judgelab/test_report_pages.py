"""The judge lab over evalhub's own verdicts: the same numbers as the judges board, every kind of
judge, the pages, the exports, the command, and who may read them."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from evalhub.adjudication.actions import do_reserve_next, do_submit, do_submit_blind
from evalhub.adjudication.models import AdjudicationItem, Reservation
from evalhub.dashboards.judges import judges_board
from evalhub.debates.models import DebateRun, DebateStatus, DebateTurn
from evalhub.judgelab.report import compute, judge_key
from evalhub.reads.caching import fingerprint
from evalhub.reads.judged_pairs import AFTER_REVEAL, Scope
from tests.adjudication.verdicts import give_verdict
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(arena):
    """The judges board's fixture: judge X right on 4 of 5 pairs, on all 5 with privileged
    information, and asked in both orders on two pairs (one flip)."""
    math = [arena.debate("alpha", "beta", verdict=v) for v in (1, 1, 2, 0)]
    writing = arena.debate("alpha", "beta", verdict=1, status=DebateStatus.ADJUDICATED, category="writing")
    plain = {math[0]: [1], math[1]: [1], math[2]: [2], math[3]: [1], writing: [1]}
    arena.judge("openai:gpt-judge", plain, reversed_verdicts={math[0]: [1], math[1]: [2]})
    arena.judge("openai:gpt-judge", {d: [d.verdict] for d in [*math, writing]}, privileged=True)
    arena.judge("openai:gpt-judge", {math[0]: [2], math[1]: [2]}, variant="masked")
    return math, writing


def report_of(report, judge_id):
    return next(r for r in report.judges if r.judge.id == judge_id)


def test_a_single_judges_agreement_and_flips_equal_the_judges_board(judged):
    board = next(r for r in judges_board(fingerprint())["judges"] if r["judge"] == "openai:gpt-judge")
    lab = report_of(compute(Scope()), "openai:gpt-judge")
    assert (lab.agreement.value, lab.n) == (board["agreement"]["plain"]["example"]["rate"], 5)
    assert (lab.position.value, lab.position_pairs) == (board["flips"]["rate"], board["flips"]["total"])
    assert lab.reference_sources == {"debate": 4, "people": 1}
    assert lab.judge.model == "judge-x", "the spec names the model judge-x (provider and model id)"


def test_privileged_information_is_a_sibling_judge_and_its_lift_is_measured_on_the_same_pairs(judged):
    lab = report_of(compute(Scope()), "openai:gpt-judge")
    (lift,) = lab.privileged
    assert lift.sources == ("reference_answer",)
    assert lift.pairs == 5
    assert (lift.without, lift.with_) == (0.8, 1.0)
    assert lift.difference.value == pytest.approx(0.2)
    assert report_of(compute(Scope()), "openai:gpt-judge + reference_answer").agreement.value == 1.0


def test_criteria_variants_stay_out_of_the_lab(judged):
    lab = report_of(compute(Scope()), "openai:gpt-judge")
    assert lab.judged == 5, "the masked-criteria answers measure robustness, not the judge"


def test_agents_panels_and_people_are_judges_too(arena, login, viewer):
    math = [arena.debate("alpha", "beta", verdict=v) for v in (1, 2)]
    unresolved = arena.debate("alpha", "beta", verdict=None, status=DebateStatus.UNRESOLVED)
    for debate in [*math, unresolved]:
        DebateTurn.objects.create(debate=debate, round=0, agent=0, agent_spec="heuristic", text="…", verdict=1)
    item = AdjudicationItem.objects.create(debate=unresolved, required_verdicts=2)
    for name, verdict in (("ana", 2), ("ben", 2)):
        person = make_user(name, "adjudicator")
        do_reserve_next(person)
        Reservation.objects.filter(user=person).update(swapped=False)  # both see the agents' order
        give_verdict(person, item.pk, verdict)
    report = compute(Scope())
    agent = report_of(report, "agent:heuristic")
    assert agent.kind_label == "Debate agent"
    assert agent.judged == 3
    # Never against a consensus it took part in: only the people's adjudication is its reference.
    assert (agent.agreement.value, agent.n, agent.reference_sources) == (0.0, 1, {"people": 1})
    panel = report_of(report, "panel:Debate panel (heuristic)")
    assert panel.judged == 2, "the panel is never measured against its own consensus"
    assert panel.n == 0, "the panel is never measured against its own consensus"
    page = login(viewer).get(f"/judges/{judge_key(panel.judge.id)}/").content.decode()
    assert "nowhere" not in page
    assert "never against the consensus they made" in page
    ana = report_of(report, "user:ana")
    assert ana.agreement.value == 1.0
    assert ana.reference_sources == {"people": 1}
    assert report.people.people == 2
    assert report.people.units == 1


def test_scaleevals_multi_llm_consistency_is_the_second_rounds_most_given_verdict(arena):
    """ScaleEval, Section 5 (Q1): every agent through two rounds, the verdict given most often; a tie
    for most is no verdict. Measured, like the panel, only against people's adjudications."""
    agreed = arena.debate("alpha", "beta", verdict=2, status=DebateStatus.ADJUDICATED)
    split = arena.debate("alpha", "beta", verdict=1, status=DebateStatus.ADJUDICATED)
    early = arena.debate("alpha", "beta", verdict=1)  # consensus in the first round: the debate stopped
    turns = {agreed: {0: (1, 2, 2), 1: (2, 2, 1)}, split: {0: (1, 2, 0), 1: (1, 2, 0)}, early: {0: (1, 1, 1)}}
    for debate, rounds in turns.items():
        for round_, verdicts in rounds.items():
            for agent, verdict in enumerate(verdicts):
                DebateTurn.objects.create(
                    debate=debate, round=round_, agent=agent, agent_spec="heuristic", text="…", verdict=verdict
                )
    report = compute(Scope())
    multi = report_of(report, "multi:Multi-LLM consistency (heuristic)")
    assert multi.kind_label == "Debate panel"
    assert multi.judged == 3
    assert (multi.n, multi.agreement.value) == (2, 0.5), "right where the second round leaned to 2; no verdict on a tie"
    DebateRun.objects.update(rounds=1)
    assert not any(r.judge.id.startswith("multi:") for r in compute(Scope()).judges), "one round is no debate"


def test_the_pages_list_every_judge_and_show_one_in_full(judged, login, viewer):
    client = login(viewer)
    body = client.get("/judges/").content.decode()
    assert "openai:gpt-judge + reference_answer" in body
    assert "Cohen" in body
    detail = client.get(f"/judges/{judge_key('openai:gpt-judge')}/")
    assert detail.status_code == 200
    text = detail.content.decode()
    assert "Confusion matrix" in text
    assert "Privileged information" in text
    assert "<svg" in text
    assert client.get("/judges/ffffffffffff/").status_code == 404
    one = json.loads(client.get(f"/judges/{judge_key('openai:gpt-judge')}.json").content)
    assert one["name"] == "openai:gpt-judge"
    assert one["n"] == 5
    assert client.get(f"/judges/{judge_key('openai:gpt-judge')}.csv")["Content-Type"].startswith("text/csv")


def test_the_json_export_has_one_object_per_judge_with_the_promised_fields(judged, login, viewer):
    response = login(viewer).get("/judges/report.json")
    assert response["Content-Type"].startswith("application/json")
    data = json.loads(response.content)
    promised = {
        "n",
        "agreement",
        "kappa",
        "kappa_ci",
        "confusion",
        "position_flip_rate",
        "longer_share",
        "people_longer_share",
        "length_coef",
        "self_preference",
        "ece",
        "brier",
    }
    assert all(promised <= set(judge) for judge in data["judges"])
    assert set(data["people"]) >= {"krippendorff_alpha", "alpha_ci"}
    csv = login(viewer).get("/judges/report.csv")
    assert csv["Content-Type"].startswith("text/csv")
    assert "openai:gpt-judge" in csv.content.decode()


def test_the_scope_filters_by_criterion(judged, login, viewer):
    body = login(viewer).get("/judges/?criterion=nonexistent").content.decode()
    assert "No judge has verdicts here yet" in body


def test_the_command_writes_the_same_report(judged, tmp_path):
    out = tmp_path / "report.json"
    call_command("judge_report", "--out", str(out))
    data = json.loads(out.read_text())
    assert data == json.loads(json.dumps(compute(Scope()).as_json()))
    assert any(judge["name"] == "openai:gpt-judge" for judge in data["judges"])


@pytest.mark.parametrize("role", ["adjudicator", None])
def test_people_who_may_not_read_boards_are_refused(judged, login, role):
    user = make_user("someone", role) if role else make_user("someone")
    client = login(user)
    assert client.get("/judges/").status_code == 403
    assert client.get("/judges/report.json").status_code == 403


def test_a_model_page_loads_the_model_as_a_judge_after_it_renders(judged, login, viewer):
    client = login(viewer)
    page = client.get("/models/judge-x/").content.decode()
    assert 'hx-get="/judges/model/judge-x/"' in page
    assert judge_key("openai:gpt-judge") not in page
    section = client.get("/judges/model/judge-x/", HTTP_HX_REQUEST="true").content.decode()
    assert judge_key("openai:gpt-judge") in section
    assert "0.800" in section
    assert client.get("/judges/model/nobody/").status_code == 404


def test_a_judges_k_samples_give_its_probability_as_their_vote_share(arena):
    debate = arena.debate("alpha", "beta", verdict=1)
    run = arena.judge("openai:k-judge", {debate: [1, 1, 2]})
    run.samples = 3
    run.save()
    lab = report_of(compute(Scope()), "openai:k-judge")
    # Two of three samples for response 1, which the debate (the reference) chose: Brier (2/3 − 1)².
    assert lab.calibration.n == 1
    assert lab.calibration.brier == pytest.approx(1 / 9)


def test_the_privileged_tables_by_category_and_by_bias_equal_a_count_by_hand(arena, login, viewer, client):
    """The privileged-information paper's Table 1 per subset (accuracy without and with, by category) and
    Table 2 (of the grader's errors, the share the bias alone explains), on planted picks and texts."""
    import random

    from evalhub.catalog.models import Response

    rng = random.Random(7)
    plan = []  # (debate, category, reference, plain pick, privileged pick, longer side, markdown side or 0)
    for n in range(30):
        category = "chat" if n < 18 else "chat-hard"
        reference, longer, markdown = rng.choice((1, 2)), rng.choice((1, 2)), rng.choice((0, 1, 2))
        other = 3 - reference
        plain = reference if rng.random() < 0.55 else (longer if rng.random() < 0.8 else rng.choice((1, 2)))
        privileged = reference if rng.random() < 0.9 else other
        debate = arena.debate("alpha", "beta", verdict=reference, category=category)
        for side, response in ((1, debate.response_a), (2, debate.response_b)):
            text = f"{response.text}{' and more' * 40 if side == longer else ''}"
            Response.objects.filter(pk=response.pk).update(
                text=text + ("\n- a point\n**bold**" if side == markdown else "")
            )
        plan.append((debate, category, reference, plain, privileged, longer, markdown))
    arena.judge("openai:gpt-judge", {d: [plain] for d, _, _, plain, *_ in plan})
    arena.judge("openai:gpt-judge", {d: [privileged] for d, _, _, _, privileged, *_ in plan}, privileged=True)

    (lift,) = report_of(compute(Scope()), "openai:gpt-judge").privileged
    for part in lift.by_category:
        mine = [row for row in plan if row[1] == part.category]
        assert part.pairs == len(mine)
        assert part.without == pytest.approx(sum(r[3] == r[2] for r in mine) / len(mine))
        assert part.with_ == pytest.approx(sum(r[4] == r[2] for r in mine) / len(mine))
    assert [part.category for part in lift.by_category] == ["chat", "chat-hard"]
    rates = {without.bias: (without, with_) for without, with_ in lift.bias_errors}
    for column, pick in ((0, 3), (1, 4)):
        wrong = [row for row in plan if row[pick] != row[2]]
        verbosity, formatting, own = (rates[name][column] for name in ("verbosity", "formatting", "self-enhancement"))
        assert verbosity.errors == formatting.errors == own.errors == len(wrong)
        assert verbosity.attributable == sum(row[pick] == row[5] for row in wrong)
        assert formatting.attributable == sum(row[6] != 0 and row[pick] == row[6] for row in wrong)
        assert own.attributable == 0  # neither response is the judge's own model's
        # ... so self-enhancement is not measured here, rather than a rate of 0.
        assert not own.measured and own.rate is None and verbosity.measured
    assert rates["verbosity"][0].rate > 0.7  # planted: most of its errors pick the longer response

    login(viewer)
    page = client.get(f"/judges/{judge_key('openai:gpt-judge')}/").content.decode()
    assert "Accuracy by category" in page and "Errors a bias alone would make" in page
    assert "by the verdict each judge gave in the order it first saw the pair" in page
    table = page[page.index("Errors a bias alone would make") :]
    row = table[table.index("<td>self-enhancement</td>") : table.index("</tr>", table.index("<td>self-enhancement"))]
    assert "not measured" in row and "0.000" not in row


def test_peoples_alpha_does_not_depend_on_which_response_a_file_listed_first(db):
    """The same people's labels of the same pairs, imported twice: once as written, once with every
    other pair listed the other way round (its winner flipped with it). Alpha is the same."""
    import random

    from evalhub.catalog.actions.judgments import do_import_judgments

    rng = random.Random(4)
    labels = []
    for prompt in range(16):
        truth = rng.choice("abab" + "t")
        for person in ("human-ann", "human-bob", "human-cy"):
            winner = truth if rng.random() < 0.7 else rng.choice("abt")
            labels.append((prompt, person, {"t": "tie"}.get(winner, winner)))

    def row(prompt: int, person: str, winner: str, flipped: bool) -> dict:
        a, b = ("beta", "alpha") if flipped else ("alpha", "beta")
        shown = {"a": "b", "b": "a"}.get(winner, winner) if flipped else winner
        return {
            "prompt_id": f"p{prompt}",
            "prompt": f"Prompt {prompt}",
            "model_a": a,
            "model_b": b,
            "response_a": f"{a} on {prompt}",
            "response_b": f"{b} on {prompt}",
            "judge": person,
            "winner": shown,
        }

    alphas = []
    for benchmark, flip_every_other in (("as-written", False), ("other-way", True)):
        rows = [row(p, person, w, flip_every_other and p % 2 == 1) for p, person, w in labels]
        do_import_judgments(
            filename="labels.jsonl",
            data="".join(json.dumps(r) + "\n" for r in rows).encode(),
            benchmark_slug=benchmark,
            allow_new_models=True,
        )
        alphas.append(compute(Scope(benchmark=benchmark)).people.alpha.value)
    assert alphas[0] is not None
    assert alphas[0] == pytest.approx(alphas[1], abs=1e-12)


def test_people_are_read_by_their_blind_verdicts_unless_the_page_asks_for_those_after_the_reveal(arena, login, viewer):
    unresolved = arena.debate("alpha", "beta", verdict=None, status=DebateStatus.UNRESOLVED)
    assert unresolved.run.adjudication_flow == "blind_first"
    DebateTurn.objects.create(debate=unresolved, round=0, agent=0, agent_spec="heuristic", text="…", verdict=1)
    item = AdjudicationItem.objects.create(debate=unresolved, required_verdicts=2)
    for name in ("ana", "ben"):  # blind: submission 2; having read the agent: submission 1, as it said
        person = make_user(name, "adjudicator")
        do_reserve_next(person)
        Reservation.objects.filter(user=person).update(swapped=False)
        do_submit_blind(person, item.pk, 2)
        do_submit(person, item.pk, 1)
    blind = report_of(compute(Scope()), "agent:heuristic")
    revealed = report_of(compute(Scope(people=AFTER_REVEAL)), "agent:heuristic")
    assert (blind.agreement.value, blind.n) == (0.0, 1), "against what people said before they saw it"
    assert (revealed.agreement.value, revealed.n) == (1.0, 1), "against what they said after: flattering"
    assert Scope().key != Scope(people=AFTER_REVEAL).key, "each kept and refreshed on its own"
    client = login(viewer)
    assert "<strong>blind</strong>" in client.get("/judges/").content.decode()
    page = client.get("/judges/?people=after_reveal").content.decode()
    assert "<strong>after the reveal</strong>" in page
    assert "people=after_reveal&amp;sort=" in page, "the sort links keep the choice"
    assert f"/adjudicate/runs/{unresolved.run_id}/agreement/#aid-effects" in page, "how much the aid moved them"
