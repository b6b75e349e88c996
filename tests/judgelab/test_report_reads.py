"""The judge lab reads ten million labels as numbers the database packs: each label's judge, verdict and
order shown in one integer, its pair in another, its probability; each response's prompt, model and
length as integers. What it reads must be what the rows say, whichever way the pair is keyed."""

from __future__ import annotations

import random

import numpy as np
import pytest

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Judgment
from evalhub.judgelab.report import compute
from evalhub.reads import judged_pairs as observations
from evalhub.reads.judged_pairs import BLIND, Scope, canonical, collect, pair_key

pytestmark = pytest.mark.django_db
WINNERS = ["a", "b", "tie", "unreadable"]


@pytest.fixture
def labelled():
    """Two judges and a blind-first person over 40 pairs shown either way round, with probabilities, ties,
    unreadable answers, and verdicts changed after the reveal."""
    rng = random.Random(7)
    lines = [
        "prompt_id,prompt,category,model_a,model_b,response_a,response_b,judge,judge_kind,winner,probability_a,blind_winner,aid"
    ]
    for n in range(40):
        models = ["m1", "m2"] if n % 3 else ["m3", "m1"]
        texts = [f"answer {n} by {model}" + " more" * (n % 4) * (model == "m1") for model in models]
        for judge, kind in (("judge-p", "model"), ("judge-v", "model"), ("human-ann", "human")):
            order = [0, 1] if rng.random() < 0.5 else [1, 0]
            winner = rng.choice(WINNERS if kind == "model" else WINNERS[:3])
            probability = f"{rng.random():.3f}" if judge == "judge-p" and winner != "unreadable" else ""
            blind = rng.choice(WINNERS[:3]) if kind == "human" else ""
            row = [f"q{n}", f"Question {n}?", "math" if n % 2 else "writing"]
            row += [models[order[0]], models[order[1]], texts[order[0]], texts[order[1]], judge, kind, winner]
            row += [probability, blind, "debate" if blind else ""]
            lines.append(",".join(row))
    do_import_judgments(filename="l.csv", data="\n".join(lines).encode(), benchmark_slug="b", allow_new_models=True)


def expected_labels(people: str) -> dict[str, list[tuple]]:
    """Every judge's labels from the rows one by one, in the order stored: (pair, pick, first shown,
    probability of the pair's lower-id response)."""
    out: dict[str, list[tuple]] = {}
    for row in Judgment.objects.order_by("pk").select_related("criterion", "judge_model"):
        first_shown = row.response_id < row.response_2_id
        verdict = row.blind_verdict if people == BLIND and row.blind_verdict is not None else row.verdict
        probability = row.probability if row.probability is None or first_shown else 1 - row.probability
        item = pair_key(row.criterion.slug, row.response_id, row.response_2_id)
        out.setdefault(row.judge_model.slug, []).append(
            (item, canonical(verdict, first_shown), first_shown, probability)
        )
    return out


def read_labels(scope: Scope) -> dict[str, list[tuple]]:
    found = collect(scope)
    items = list(found.rows)
    return {
        judge: [
            (items[row], pick, shown, None if np.isnan(p) else p)
            for row, pick, shown, p in zip(*(part.tolist() for part in labels), strict=True)
        ]
        for judge, labels in found.labels.items()
    }


@pytest.mark.parametrize("people", [BLIND, "after_reveal"])
@pytest.mark.parametrize("one_key", [True, False], ids=["pair-as-one-integer", "pair-as-two-integers"])
def test_the_labels_read_are_the_rows_verdicts_orders_and_probabilities(labelled, people, one_key, monkeypatch):
    if not one_key:  # response ids too large for the pair's three ids in one 64-bit integer
        monkeypatch.setattr(observations, "ONE_KEY_BELOW", 1)
    read = read_labels(Scope(people=people))
    expected = expected_labels(people)
    assert read.keys() == expected.keys()
    for judge, labels in expected.items():
        assert [row[:3] for row in read[judge]] == [row[:3] for row in labels], judge
        assert [row[3] for row in read[judge]] == pytest.approx([row[3] for row in labels]), judge
    assert sum(pick == -1 for labels in read.values() for _, pick, _, _ in labels) > 0  # unreadable ones read


def test_the_report_is_the_same_whichever_way_the_pairs_are_keyed(labelled, monkeypatch):
    one_integer = compute(Scope()).as_json()
    monkeypatch.setattr(observations, "ONE_KEY_BELOW", 1)
    assert compute(Scope()).as_json() == one_integer


def test_each_label_is_read_as_three_numbers_and_each_response_as_four(labelled, monkeypatch):
    """Each value of a row costs the database driver a Python object: six a label took 16.1 CPU-s of a
    refresh at ten million labels, three 9.7; a response's model slug and prompt category read as text
    made 800,000 responses cost 7 CPU-s."""
    widths = []
    numbers = observations.numeric_table

    def counting(rows, dtype):
        table = numbers(rows, dtype)
        widths.append((len(table), len(dtype.names)))
        return table

    monkeypatch.setattr(observations, "numeric_table", counting)
    found = collect(Scope())
    labels = Judgment.objects.count()
    assert (labels, 3) in widths
    assert (2 * len(found.pairs), 4) in widths
    assert {pair.category for pair in found.pairs.values()} == {"math", "writing"}
    assert {(pair.model_1, pair.model_2) for pair in found.pairs.values()} <= {
        ("m1", "m2"),
        ("m2", "m1"),
        ("m1", "m3"),
        ("m3", "m1"),
    }


def test_a_response_deleted_while_its_labels_are_read_is_said_not_taken_from_its_neighbour(labelled, monkeypatch):
    """The responses are found by a sorted search over the ids read back: one deleted between the labels'
    read and theirs must stop the report, not lend its pair the next response's prompt and model."""
    from evalhub.catalog.models import Response

    pairs = observations._pairs

    def deleted_meanwhile(found):
        Response.objects.filter(pk=min(low for _, low, _ in found.rows)).delete()
        return pairs(found)

    monkeypatch.setattr(observations, "_pairs", deleted_meanwhile)
    with pytest.raises(LookupError, match="deleted while the judge lab read"):
        collect(Scope())
