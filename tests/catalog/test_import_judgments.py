"""Importing pairwise judgments: generic, MT-Bench and AlpacaEval files; all rows or none, each bad
row named; the same file twice changes nothing; imported people and judges reach the judge lab."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Criterion, Judgment, LanguageModel, Prompt, Response
from evalhub.core.files.judgments import parse_judgment_file
from evalhub.judgelab.report import compute
from evalhub.reads.judged_pairs import Scope

pytestmark = pytest.mark.django_db

GENERIC_CSV = (
    "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner,probability_a\r\n"
    "q1,Is 221 prime?,gpt-4o,llama-3,No: 13 x 17.,Yes.,human-ana,a,\r\n"
    "q1,,gpt-4o,llama-3,No: 13 x 17.,Yes.,gpt-4o,a,0.9\r\n"
    "q1,,llama-3,gpt-4o,Yes.,No: 13 x 17.,gpt-4o,b,0.2\r\n"
    "q2,Name a prime above 100.,gpt-4o,llama-3,101,100,human-ana,a,\r\n"
)


def jsonl(*rows) -> bytes:
    return "\n".join(json.dumps(row) for row in rows).encode()


def conversation(question: str, answer: str, follow_up: str = "", second: str = "") -> list[dict]:
    messages = [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
    if follow_up:
        messages += [{"role": "user", "content": follow_up}, {"role": "assistant", "content": second}]
    return messages


MT_BENCH = [
    {
        "question_id": 81,
        "model_a": "gpt-3.5-turbo",
        "model_b": "vicuna-13b-v1.2",
        "winner": "model_a",
        "judge": "expert_0",
        "turn": 1,
        "conversation_a": conversation("Write a haiku.", "Snow falls."),
        "conversation_b": conversation("Write a haiku.", "A poem."),
    },
    {
        "question_id": 81,
        "model_a": "gpt-3.5-turbo",
        "model_b": "vicuna-13b-v1.2",
        "winner": "tie (bothbad)",
        "judge": ["gpt-4", "pair-v2"],
        "turn": 2,
        "conversation_a": conversation("Write a haiku.", "Snow falls.", "Now in French.", "La neige."),
        "conversation_b": conversation("Write a haiku.", "A poem.", "Now in French.", "Un poème."),
    },
]

ALPACA = [
    {
        "instruction": "Say hi.",
        "output_1": "Hi!",
        "output_2": "Hello there!",
        "generator_1": "gpt4_1106_preview",
        "generator_2": "Mixtral-8x7B-Instruct-v0.1",
        "preference": 1.0,
        "annotator": "alpaca_eval_gpt4",
    },
    {
        "instruction": "Say bye.",
        "output_1": "Bye.",
        "output_2": "Goodbye!",
        "generator_1": "gpt4_1106_preview",
        "generator_2": "Mixtral-8x7B-Instruct-v0.1",
        "preference": 1.75,
        "annotator": "alpaca_eval_gpt4",
    },
    {
        "instruction": "Say bye.",
        "output_1": "Bye.",
        "output_2": "Goodbye!",
        "generator_1": "gpt4_1106_preview",
        "generator_2": "Mixtral-8x7B-Instruct-v0.1",
        "preference": 1.5,
        "annotator": "human_3",
    },
]


def test_a_generic_file_creates_prompts_responses_judges_and_judgments():
    summary = do_import_judgments(
        filename="labels.csv", data=GENERIC_CSV.encode(), benchmark_slug="primes", allow_new_models=True
    )
    assert summary.layout == "generic"
    assert summary.counts["judgments_created"] == 4
    assert Prompt.objects.filter(benchmark__slug="primes").count() == 2
    assert Response.objects.count() == 4
    assert LanguageModel.objects.get(slug="human-ana").is_human
    swapped = Judgment.objects.get(judge_model__slug="gpt-4o", response__model__slug="llama-3")
    assert (swapped.verdict, swapped.probability) == (2, 0.2), "stored as shown: b (gpt-4o) was second"


def test_importing_the_same_file_again_changes_nothing_and_an_edited_label_replaces_its_row():
    do_import_judgments(filename="l.csv", data=GENERIC_CSV.encode(), benchmark_slug="primes", allow_new_models=True)
    first_ids = set(Judgment.objects.values_list("pk", flat=True))
    again = do_import_judgments(filename="l.csv", data=GENERIC_CSV.encode(), benchmark_slug="primes")
    assert again.counts["judgments_unchanged"] == 4
    assert set(Judgment.objects.values_list("pk", flat=True)) == first_ids
    edited = GENERIC_CSV.replace("101,100,human-ana,a", "101,100,human-ana,tie")
    summary = do_import_judgments(filename="l.csv", data=edited.encode(), benchmark_slug="primes")
    assert (summary.counts["judgments_replaced"], summary.counts["judgments_unchanged"]) == (1, 3)
    assert Judgment.objects.count() == 4
    assert Judgment.objects.filter(verdict=0).count() == 1


def test_an_mt_bench_file_maps_turns_winners_and_judges():
    summary = do_import_judgments(
        filename="mt.jsonl", data=jsonl(*MT_BENCH), benchmark_slug="mt-bench", allow_new_models=True
    )
    assert summary.layout == "mt-bench"
    assert set(Prompt.objects.values_list("external_id", flat=True)) == {"81", "81-turn-2"}
    assert Prompt.objects.get(external_id="81-turn-2").text == "Turn 1: Write a haiku.\n\nTurn 2: Now in French."
    assert LanguageModel.objects.filter(slug="gpt-3-5-turbo").exists()
    assert LanguageModel.objects.get(slug="expert_0").is_human
    model_judge = Judgment.objects.get(judge_model__slug="gpt-4-pair-v2")
    assert model_judge.verdict == 0
    assert not model_judge.judge_model.is_human


def test_an_alpaca_eval_file_maps_preferences_to_verdicts_and_probabilities():
    do_import_judgments(filename="ae.jsonl", data=jsonl(*ALPACA), benchmark_slug="alpaca", allow_new_models=True)
    by_prompt = {j.response.prompt.text: j for j in Judgment.objects.filter(judge_model__slug="alpaca_eval_gpt4")}
    assert (by_prompt["Say hi."].verdict, by_prompt["Say hi."].probability) == (1, None)
    assert (by_prompt["Say bye."].verdict, by_prompt["Say bye."].probability) == (2, pytest.approx(0.25))
    assert Judgment.objects.get(judge_model__slug="human_3").verdict == 0
    assert LanguageModel.objects.filter(slug="Mixtral-8x7B-Instruct-v0-1").exists()


def test_alpaca_evals_annotations_json_imports_as_published_a_json_array():
    data = json.dumps(ALPACA, indent=2).encode()
    summary = do_import_judgments(filename="annotations.json", data=data, benchmark_slug="ae", allow_new_models=True)
    assert summary.layout == "alpaca-eval"
    assert summary.counts["judgments_created"] == 3


def test_a_new_model_keeps_the_name_its_file_gave_it():
    do_import_judgments(
        filename="ae.json", data=json.dumps(ALPACA).encode(), benchmark_slug="ae", allow_new_models=True
    )
    assert LanguageModel.objects.get(slug="Mixtral-8x7B-Instruct-v0-1").display_name == "Mixtral-8x7B-Instruct-v0.1"
    assert LanguageModel.objects.get(slug="gpt4_1106_preview").display_name == "gpt4_1106_preview"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b'{"instruction": "x"}', "one array of records, not dict"),
        (b"[1, 2]", "each record must be a JSON object"),
        (b"[{,}]", "not valid JSON"),
    ],
)
def test_a_json_file_that_is_not_an_array_of_records_is_refused_with_a_reason(data, reason):
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="ae.json", data=data, benchmark_slug="ae", allow_new_models=True)
    assert reason in str(rejected.value.errors[0])
    assert not Judgment.objects.exists()


def test_two_names_with_no_letter_or_digit_are_refused_not_merged_into_one_model():
    rows = [dict(ALPACA[0], generator_2="!!!"), dict(ALPACA[1], generator_2="")]
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="ae.jsonl", data=jsonl(*rows), benchmark_slug="ae", allow_new_models=True)
    reasons = {error.line: str(error) for error in rejected.value.errors}
    assert "'generator_2' '!!!' has no letter or digit" in reasons[1]
    assert "'generator_2' '' has no letter or digit" in reasons[2]
    assert not LanguageModel.objects.filter(slug="unnamed").exists()


def test_two_names_that_would_make_one_slug_are_refused_with_the_line():
    rows = [ALPACA[0], dict(ALPACA[1], generator_2="Mixtral-8x7B-Instruct-v0-1")]
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="ae.jsonl", data=jsonl(*rows), benchmark_slug="ae", allow_new_models=True)
    assert rejected.value.errors[0].line == 2
    assert "would both become 'Mixtral-8x7B-Instruct-v0-1'" in str(rejected.value.errors[0])


@pytest.mark.parametrize(
    ("name", "data", "line", "reason"),
    [
        ("bad.csv", GENERIC_CSV.replace("human-ana,a,\r\nq1", "human-ana,maybe,\r\nq1"), 2, "'winner' must be a, b"),
        ("bad.csv", GENERIC_CSV.replace("gpt-4o,a,0.9", "gpt-4o,a,1.5"), 3, "'probability_a' must be"),
        (
            "bad.csv",
            GENERIC_CSV.replace("q2,Name a prime above 100.,gpt-4o", "q2,Name a prime above 100.,llama-3"),
            5,
            "same model",
        ),
        (
            "bad.csv",
            "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,judge_kind,winner\r\n"
            "q1,Is 221 prime?,gpt-4o,llama-3,No.,Yes.,ana,human,a\r\n"
            "q2,Name a prime.,gpt-4o,llama-3,101,100,ana,,a\r\n",  # no kind: a model, by her name
            3,
            "judge 'ana' is a person on line 2, not here",
        ),
        ("bad.jsonl", jsonl(MT_BENCH[0], {**MT_BENCH[1], "winner": "model_c"}), 2, "'winner' must be model_a"),
        ("bad.jsonl", jsonl({**MT_BENCH[0], "turn": 3}), 1, "'turn' must be 1 or 2"),
        (
            "bad.jsonl",
            jsonl(
                MT_BENCH[0],
                {**MT_BENCH[0], "question_id": 82, "conversation_a": MT_BENCH[0]["conversation_a"][::-1]},
            ),
            2,
            "'conversation_a' must start with the user's message, not 'assistant'",
        ),
        ("bad.jsonl", jsonl(ALPACA[0], {**ALPACA[1], "preference": 7}), 2, "'preference' must be between"),
        ("bad.jsonl", jsonl(ALPACA[0], {**ALPACA[1], "output_1": "Bye.\u0000"}), 2, "NUL"),
    ],
)
@pytest.mark.parametrize("as_stream", [False, True], ids=["bytes", "stream"])
def test_a_broken_file_names_the_bad_line_and_writes_nothing(name, data, line, reason, as_stream):
    data = data.encode() if isinstance(data, str) else data
    source = io.BytesIO(data) if as_stream else data  # a file read as a stream says the same as its bytes
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename=name, data=source, benchmark_slug="broken", allow_new_models=True)
    assert any(error.line == line and reason in error.message for error in rejected.value.errors), rejected.value.errors
    assert not Judgment.objects.exists()
    assert not Prompt.objects.exists()
    assert not LanguageModel.objects.exists()


def test_a_response_that_differs_between_two_rows_of_the_same_model_is_refused():
    data = GENERIC_CSV.replace("q1,,gpt-4o,llama-3,No: 13 x 17.,Yes.,gpt-4o", "q1,,gpt-4o,llama-3,No.,Yes.,gpt-4o")
    parsed = parse_judgment_file(data.encode(), "csv", known_models=(), allow_new_models=True)
    assert [str(error) for error in parsed.errors] == ["line 3: response_a of 'gpt-4o' differs from the one on line 2."]


def test_unknown_candidate_models_are_refused_unless_allowed():
    with pytest.raises(ImportRejected, match="problem"):
        do_import_judgments(filename="l.csv", data=GENERIC_CSV.encode(), benchmark_slug="primes")
    assert not Judgment.objects.exists()


def test_the_command_imports_and_names_each_bad_line(tmp_path, capsys):
    good, bad = tmp_path / "ok.jsonl", tmp_path / "bad.jsonl"
    good.write_bytes(jsonl(*ALPACA))
    bad.write_bytes(jsonl(ALPACA[0], {**ALPACA[1], "preference": "left"}))
    call_command("import_judgments", str(good), "--format", "alpaca-eval", "--create-models")
    assert Judgment.objects.count() == 3
    assert "See it on the pairwise board (/leaderboards/?benchmark=imported-judgments)" in capsys.readouterr().out
    with pytest.raises(CommandError, match="nothing was imported"):
        call_command("import_judgments", str(bad), "--create-models")
    assert "bad.jsonl: line 2: 'preference' must be a number" in capsys.readouterr().err


def test_imported_human_labels_are_the_reference_of_imported_model_judges():
    do_import_judgments(filename="l.csv", data=GENERIC_CSV.encode(), benchmark_slug="primes", allow_new_models=True)
    report = compute(Scope())
    judge = next(r for r in report.judges if r.judge.id == "gpt-4o")
    # Asked q1 in both orders (the same verdict each time): no flip; agrees with Ana on q1.
    assert (judge.n, judge.agreement.value, judge.reference_sources) == (1, 1.0, {"people": 1})
    assert (judge.position_pairs, judge.position.value) == (1, 0.0)
    assert judge.self_preference.own_win_rate == 1.0
    assert judge.self_preference.people_win_rate == 1.0
    assert judge.calibration.n == 1
    # P(gpt-4o better) 0.9 shown first, 1 − 0.2 shown second: the two orders half each, 0.85.
    assert judge.calibration.brier == pytest.approx((1 - 0.85) ** 2)


def test_imported_labels_and_verdicts_are_battles_on_the_pairwise_board():
    from evalhub.dashboards.pairwise import pairwise_board
    from evalhub.reads.battles import IMPORTED_JUDGES, IMPORTED_PEOPLE, Filters
    from evalhub.reads.caching import fingerprint

    do_import_judgments(filename="l.csv", data=GENERIC_CSV.encode(), benchmark_slug="primes", allow_new_models=True)
    people = pairwise_board(Filters(sources=(IMPORTED_PEOPLE,)), fingerprint())
    assert people["battles"] == 2
    assert [r["model"] for r in people["ratings"]] == ["gpt-4o", "llama-3"]
    judges = pairwise_board(Filters(sources=(IMPORTED_JUDGES,)), fingerprint())
    assert judges["battles"] == 2, "gpt-4o won both orders"
    assert judges["ratings"][0]["wins"] == 2, "gpt-4o won both orders"
    assert pairwise_board(Filters(), fingerprint())["battles"] == 0, "a Filters' own sources: debates and people"


@pytest.mark.django_db(transaction=True)
def test_a_flushed_database_gets_the_built_in_criteria_back_and_an_edited_one_is_kept():
    """Transactional tests flush the database between them, and so does `manage.py flush`: the built-in
    criteria came from a data migration only, so after a flush a labels file naming `helpfulness` was
    refused, and which tests failed depended on their order (they did under pytest-xdist)."""
    from evalhub.core.prompts.builtin_criteria import BUILTIN_CRITERIA

    call_command("flush", interactive=False, verbosity=0)
    assert set(BUILTIN_CRITERIA) <= set(Criterion.objects.values_list("slug", flat=True))
    Criterion.objects.filter(slug="helpfulness").update(definition="Ours.")
    call_command("flush", interactive=False, verbosity=0)
    Criterion.objects.filter(slug="helpfulness").update(definition="Ours.")
    call_command("migrate", verbosity=0)  # a later migrate leaves an existing one as it is
    assert Criterion.objects.get(slug="helpfulness").definition == "Ours."


def test_a_database_made_by_migrate_alone_knows_the_built_in_criteria():
    from evalhub.core.prompts.builtin_criteria import BUILTIN_CRITERIA

    assert set(BUILTIN_CRITERIA) <= set(Criterion.objects.values_list("slug", flat=True))
    labels = (
        "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner,criterion\r\n"
        "q1,Is 221 prime?,gpt-4o,llama-3,No: 13 x 17.,Yes.,human-ana,a,helpfulness\r\n"
        "q1,,gpt-4o,llama-3,No: 13 x 17.,Yes.,gpt-4o,a,helpfulness\r\n"
    )
    summary = do_import_judgments(filename="l.csv", data=labels.encode(), benchmark_slug="b", allow_new_models=True)
    assert summary.counts["judgments_created"] == 2
    assert set(Judgment.objects.values_list("criterion__slug", flat=True)) == {"helpfulness"}


BOTH_ORDERS = "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner\r\n" + "".join(
    f"q{i},Question {i}?,gpt-4o,llama-3,Good {i}.,Bad {i}.,human-ana,a\r\n"
    f"q{i},,gpt-4o,llama-3,Good {i}.,Bad {i}.,judge-x,{'a' if i % 4 else 'b'}\r\n"
    f"q{i},,llama-3,gpt-4o,Bad {i}.,Good {i}.,judge-x,{'b' if i % 3 else 'a'}\r\n"
    for i in range(12)
)


def test_the_order_first_shown_is_the_files_and_survives_an_edited_reimport():
    do_import_judgments(filename="l.csv", data=BOTH_ORDERS.encode(), benchmark_slug="b", allow_new_models=True)
    before = next(r for r in compute(Scope()).judges if r.judge.id == "judge-x")
    # q0's first-shown verdict (gpt-4o first) edited from b to a: its row must keep its place.
    edited = BOTH_ORDERS.replace(
        "q0,,gpt-4o,llama-3,Good 0.,Bad 0.,judge-x,b", "q0,,gpt-4o,llama-3,Good 0.,Bad 0.,judge-x,a"
    )
    summary = do_import_judgments(filename="l.csv", data=edited.encode(), benchmark_slug="b")
    assert (summary.counts["judgments_replaced"], summary.counts["judgments_created"]) == (1, 0)
    after = next(r for r in compute(Scope()).judges if r.judge.id == "judge-x")
    # Agreement as first shown: 9 of 12 before (q0, q4, q8 wrong), 10 of 12 after; the other order unchanged.
    assert before.agreement.value == pytest.approx(9 / 12)
    assert after.agreement.value == pytest.approx(10 / 12)
    assert after.by_order.second_shown.value == before.by_order.second_shown.value == pytest.approx(8 / 12)


def test_a_judge_asked_in_both_orders_has_its_agreement_per_order_and_averaged():
    do_import_judgments(filename="l.csv", data=BOTH_ORDERS.encode(), benchmark_slug="b", allow_new_models=True)
    judge = next(r for r in compute(Scope()).judges if r.judge.id == "judge-x")
    order = judge.by_order
    assert order.pairs == 12
    assert order.first_shown.value == pytest.approx(9 / 12)
    assert order.second_shown.value == pytest.approx(8 / 12)  # q0, q3, q6, q9 wrong
    assert order.averaged.value == pytest.approx(17 / 24)
    assert order.averaged.low < order.averaged.value < order.averaged.high
    assert judge.as_json()["agreement_by_order"]["averaged"]["value"] == pytest.approx(17 / 24)


def test_an_unreadable_answer_is_kept_as_a_miss_for_the_judge_and_is_no_battle():
    from django.core.cache import cache

    from evalhub.dashboards.pairwise import pairwise_board
    from evalhub.reads.battles import IMPORTED_JUDGES, Filters
    from evalhub.reads.caching import fingerprint

    cache.clear()  # a rolled-back test can leave a board under the same fingerprint
    labels = GENERIC_CSV.replace(
        "q1,,gpt-4o,llama-3,No: 13 x 17.,Yes.,gpt-4o,a,0.9", "q1,,gpt-4o,llama-3,No: 13 x 17.,Yes.,gpt-4o,unreadable,"
    )
    do_import_judgments(filename="l.csv", data=labels.encode(), benchmark_slug="primes", allow_new_models=True)
    assert Judgment.objects.get(judge_model__slug="gpt-4o", response__model__slug="gpt-4o").verdict is None
    judge = next(r for r in compute(Scope()).judges if r.judge.id == "gpt-4o")
    # Its first-shown answer on q1 was unreadable: a miss against Ana's label, in the confusion's last column.
    assert judge.agreement.value == 0.0
    assert sum(row[-1] for row in judge.confusion) == 1
    board = pairwise_board(Filters(sources=(IMPORTED_JUDGES,)), fingerprint())
    assert board["battles"] == 1  # the reversed-order verdict only


def test_an_unreadable_answer_with_a_probability_is_refused():
    labels = GENERIC_CSV.replace("gpt-4o,a,0.9", "gpt-4o,unreadable,0.9")
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="l.csv", data=labels.encode(), benchmark_slug="primes", allow_new_models=True)
    assert "an unreadable answer has no 'probability_a'" in str(rejected.value.errors[0])


def test_counting_an_import_of_300000_labels_asks_the_database_in_bounded_queries():
    """An import of 260,000 new judgments failed at its last step on SQLite ('too many SQL variables':
    every new id in one IN list) after minutes of work, and imported nothing."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evalhub.catalog.label_counts import PKS_PER_QUERY, do_count_imported

    with CaptureQueriesContext(connection) as queries:
        do_count_imported(range(1, 300_001), 1)  # ids nobody holds: nothing to count, but every one asked
    assert len(queries) == -(-300_000 // PKS_PER_QUERY)
    # Each query's ids as one parameter (an array, or a JSON list SQLite reads), never a placeholder each.
    assert all("= ANY(" in query["sql"] or "json_each(" in query["sql"] for query in queries)


def test_the_counts_of_new_labels_made_from_the_file_equal_a_recount_from_the_stored_rows():
    """New labels' battles are counted from what the import holds, not read back: the counts must equal
    a recount of the stored judgments (people and judges, both orders, a tie, an unreadable answer)."""
    from evalhub.catalog.label_counts import imported_counts
    from evalhub.tallies.models import BATTLE_COUNTS, BATTLE_KEY, BattleCount

    labels = (
        GENERIC_CSV
        + "q2,,llama-3,gpt-4o,100,101,gpt-4o,tie,0.5\r\n"
        + "q2,,gpt-4o,llama-3,101,100,judge-x,unreadable,\r\n"
    )
    do_import_judgments(filename="l.csv", data=labels.encode(), benchmark_slug="primes", allow_new_models=True)
    do_import_judgments(filename="l.csv", data=labels.encode(), benchmark_slug="primes", allow_new_models=True)
    rows = BattleCount.objects.values_list(*BATTLE_KEY, *BATTLE_COUNTS)
    kept = {tuple(row[: len(BATTLE_KEY)]): list(row[len(BATTLE_KEY) :]) for row in rows if any(row[len(BATTLE_KEY) :])}
    assert kept == dict(imported_counts())
    assert sum(sum(values) for values in kept.values()) == 5  # the unreadable answer is no battle


def test_an_import_of_300000_new_judgments_succeeds_on_the_embedded_database():
    """260,000 new judgments once failed at the import's last step on SQLite ('too many SQL variables')
    after minutes of work, and imported nothing; every step now asks in bounded batches."""
    from evalhub.tallies.models import BattleCount

    models = [f"model-{n}" for n in range(16)]
    pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]]  # 120 pairs
    lines = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    for row in range(300_000):
        prompt, rest = divmod(row, 1_200)
        (a, b), judge = pairs[rest // 10], rest % 10
        text = f"Question {prompt}?" if rest == 0 else ""
        lines.append(f"p{prompt},{text},{a},{b},{prompt} by {a},{prompt} by {b},judge-{judge},{'ab'[row % 2]}")
    summary = do_import_judgments(
        filename="large.csv", data="\n".join(lines).encode(), benchmark_slug="large", allow_new_models=True
    )
    assert summary.counts["judgments_created"] == Judgment.objects.count() == 300_000
    assert sum(BattleCount.objects.values_list("wins_a", flat=True)) == 150_000


# --- labels stored as the file is read ------------------------------------------------------------


def many_labels(rows: int, last: str = "") -> bytes:
    lines = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    lines += [f"q{n},Question {n}?,gpt-4o,llama-3,A{n},B{n},new-judge,a" for n in range(rows)]
    return ("\r\n".join(lines + ([last] if last else [])) + "\r\n").encode()


def test_on_postgresql_labels_reach_the_server_while_the_file_is_still_read(monkeypatch):
    """The server stores the first labels while the client reads the rest (a million took 15 s on each
    side, one after the other); on SQLite, this process's own database, the file is read first."""
    from django.db import connection

    from evalhub.core.files import judgments
    from evalhub.system.bulk_insert import RowWriter

    read = {"rows": 0, "at first write": None}
    reader = judgments.read_rows

    def counting(*args, **kwargs):
        for row in reader(*args, **kwargs):
            read["rows"] += 1
            yield row

    writer_write = RowWriter.write

    def first_write(self, row):
        if read["at first write"] is None:
            read["at first write"] = read["rows"]
        writer_write(self, row)

    monkeypatch.setattr(judgments, "read_rows", counting)
    monkeypatch.setattr(RowWriter, "write", first_write)
    summary = do_import_judgments(
        filename="labels.csv", data=many_labels(500), benchmark_slug="stream", allow_new_models=True
    )
    assert summary.counts["judgments_created"] == Judgment.objects.count() == 500
    assert read["rows"] == 500
    if connection.vendor == "postgresql":
        assert read["at first write"] == 1
    else:
        assert read["at first write"] == 500
    # What they point to was made after them, with the keys reserved for it.
    judge = LanguageModel.objects.get(slug="new-judge")
    assert set(Judgment.objects.values_list("judge_model_id", flat=True)) == {judge.pk}
    assert Response.objects.filter(prompt__benchmark__slug="stream").count() == 1000
    assert not Judgment.objects.exclude(response__prompt__benchmark__slug="stream").exists()


@pytest.mark.parametrize(
    "last",
    [
        "q9,,gpt-4o,llama-3,A9,B9,new-judge,maybe",  # a bad verdict
        "q0,,gpt-4o,llama-3,another text,B0,other-judge,a",  # a response that differs from its first
        "q9,,gpt-4o,llama-3,A9,B9,new-judge,a,",  # a column too many
    ],
)
def test_a_bad_last_row_leaves_nothing_of_the_labels_already_stored(last):
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(
            filename="labels.csv", data=many_labels(300, last), benchmark_slug="late", allow_new_models=True
        )
    assert [error.line for error in rejected.value.errors] == [302]
    assert not Judgment.objects.exists()
    assert not LanguageModel.objects.filter(slug__in=["new-judge", "gpt-4o", "llama-3"]).exists()
    assert not Response.objects.exists() and not Prompt.objects.exists()


def test_an_unknown_criterion_mid_file_is_named_and_nothing_is_stored():
    data = many_labels(3).decode().replace("winner\r\n", "winner,criterion\r\n", 1)
    data = data.replace(",a\r\n", ",a,overall\r\n").replace(
        "q1,Question 1?,gpt-4o,llama-3,A1,B1,new-judge,a,overall",
        "q1,Question 1?,gpt-4o,llama-3,A1,B1,new-judge,a,no-such",
    )
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="labels.csv", data=data.encode(), benchmark_slug="c", allow_new_models=True)
    assert [str(error) for error in rejected.value.errors] == ["line 3: unknown criterion 'no-such'."]
    assert not Judgment.objects.exists() and not Criterion.objects.filter(slug="overall").exists()


def test_a_judge_another_import_made_meanwhile_refuses_the_file_with_a_reason(monkeypatch):
    """Its key was reserved when the file named it; the other import's row has another: the labels
    written would point at nothing, so the file is refused, to be imported again."""
    from evalhub.catalog.actions import judgments as actions  # where the judgments import calls it

    create_models = actions.do_create_models

    def another_import_first(*args, **kwargs):
        LanguageModel.objects.create(slug="new-judge", display_name="made by another import")
        return create_models(*args, **kwargs)

    monkeypatch.setattr(actions, "do_create_models", another_import_first)
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="labels.csv", data=many_labels(3), benchmark_slug="m", allow_new_models=True)
    assert "model 'new-judge' was added by someone else during this import" in str(rejected.value.errors[0])
    assert not Judgment.objects.exists()


def test_a_response_another_import_made_meanwhile_refuses_the_file_with_a_reason(monkeypatch):
    """The labels point at the key reserved for the response of gpt-4o to q0 when the file named it;
    another import storing that response first gave it another key, so the file is refused."""
    from evalhub.catalog.actions import judgments as actions  # where the judgments import calls it

    for slug in ("gpt-4o", "llama-3"):
        LanguageModel.objects.create(slug=slug, display_name=slug)
    do_import_judgments(filename="first.csv", data=many_labels(1), benchmark_slug="m")  # q0 is stored
    Response.objects.filter(prompt__external_id="q0").delete()
    upsert_prompts = actions.do_upsert_prompts

    def another_import_first(*args, **kwargs):
        prompts = upsert_prompts(*args, **kwargs)
        gpt = LanguageModel.objects.get(slug="gpt-4o")
        Response.objects.create(prompt_id=prompts.get("q0").id, model=gpt, text="A0")
        return prompts

    monkeypatch.setattr(actions, "do_upsert_prompts", another_import_first)
    with pytest.raises(ImportRejected) as rejected:
        do_import_judgments(filename="labels.csv", data=many_labels(1), benchmark_slug="m")
    assert "the response of 'gpt-4o' to prompt 'q0' was added by someone else" in str(rejected.value.errors[0])
    assert not Judgment.objects.exists()


ARENA = [
    {
        "question_id": "5f2a",
        "model_a": "chatglm-6b",
        "model_b": "koala-13b",
        "winner": winner,
        "judge": f"arena_user_{voter}",
        "turn": 1,
        "conversation_a": conversation("Name a prime.", "7"),
        "conversation_b": conversation("Name a prime.", "8"),
    }
    for voter, winner in ((973, "model_a"), (421, "model_b"), (555, "tie"))
]


def test_arena_voters_are_people_and_their_votes_reach_peoples_labels():
    """LMArena's battles name each voter arena_user_…: people, not LLM judges (they were listed under
    /judges/ as models, and their votes never reached people's labels)."""
    do_import_judgments(filename="arena.jsonl", data=jsonl(*ARENA), benchmark_slug="arena", allow_new_models=True)
    voters = LanguageModel.objects.filter(slug__startswith="arena_user_")
    assert voters.count() == 3
    assert all(voter.is_human for voter in voters)
    assert Judgment.objects.filter(judge_model__is_human=True).count() == 3


@pytest.mark.parametrize(("judges_are", "people"), [("models", False), ("people", True)])
def test_the_file_may_say_who_its_judges_are_on_the_command_and_the_page(judges_are, people, tmp_path, client):
    from tests.conftest import make_user

    path = tmp_path / "arena.jsonl"
    path.write_bytes(jsonl(*ARENA))
    call_command("import_judgments", str(path), "--benchmark", "arena", "--create-models", "--judges-are", judges_are)
    assert {m.is_human for m in LanguageModel.objects.filter(slug__startswith="arena_user_")} == {people}

    # The upload page, with AlpacaEval annotations whose annotator's name says nothing.
    client.force_login(make_user("ida", "admin"))
    upload = tmp_path / "annotations.json"
    upload.write_text(json.dumps(ALPACA[:2]))
    with upload.open("rb") as file:
        answer = client.post(
            "/judges/import/",
            {"file": file, "layout": "auto", "benchmark": "alpaca", "create_models": "on", "judges_are": judges_are},
        )
    assert answer.status_code == 302, answer.content.decode()[:2000]
    assert LanguageModel.objects.get(slug="alpaca_eval_gpt4").is_human is people


def test_a_generic_files_own_judge_kind_wins_over_the_files_choice():
    labels = GENERIC_CSV.replace(",judge,winner,", ",judge,judge_kind,winner,").replace(",human-ana,", ",human-ana,,")
    labels = labels.replace(",gpt-4o,a,0.9", ",gpt-4o,model,a,0.9").replace(",gpt-4o,b,0.2", ",gpt-4o,model,b,0.2")
    do_import_judgments(
        filename="l.csv", data=labels.encode(), benchmark_slug="primes", allow_new_models=True, judges_are="people"
    )
    assert LanguageModel.objects.get(slug="human-ana").is_human
    assert not LanguageModel.objects.get(slug="gpt-4o").is_human, "the file said: a model"


def test_imported_arena_votes_show_on_the_board_with_its_default_filters(client):
    """The board's sources defaulted to debates and adjudication: after an Arena import it said "No battles
    match" and sent the user to start a debate run."""
    from tests.conftest import make_user

    do_import_judgments(filename="arena.jsonl", data=jsonl(*ARENA), benchmark_slug="arena", allow_new_models=True)
    client.force_login(make_user("vic", "viewer"))
    page = client.get("/leaderboards/", {"benchmark": "arena"}).content.decode()
    assert "No battles match" not in page
    assert "3 battles (Imported human labels: 3)" in page
    assert 'value="imported_people" checked' in page, "the board says what it counts"


def test_judges_verdicts_count_by_default_only_where_no_people_or_panel_decided(client):
    from tests.conftest import make_user

    do_import_judgments(filename="ae.jsonl", data=jsonl(*ALPACA[:2]), benchmark_slug="alpaca", allow_new_models=True)
    client.force_login(make_user("vic", "viewer"))
    page = client.get("/leaderboards/", {"benchmark": "alpaca"}).content.decode()
    assert "2 battles (Imported judge verdicts: 2)" in page, "AlpacaEval's annotations: judges only"

    do_import_judgments(filename="ae.jsonl", data=jsonl(ALPACA[2]), benchmark_slug="alpaca")
    page = client.get("/leaderboards/", {"benchmark": "alpaca"}).content.decode()
    assert "1 battle (Imported human labels: 1)" in page, "people decided here: the judges are measured against them"


def test_a_board_with_no_battle_under_the_ticked_sources_names_the_sources_that_have_some(client):
    from tests.conftest import make_user

    do_import_judgments(filename="arena.jsonl", data=jsonl(*ARENA), benchmark_slug="arena", allow_new_models=True)
    client.force_login(make_user("vic", "viewer"))
    page = client.get("/leaderboards/", {"benchmark": "arena", "source": "consensus"}).content.decode()
    assert "No battles match the sources ticked" in page
    assert "<strong>Imported human labels</strong>" in page


def test_gzipped_files_import_as_their_contents_do_and_a_bad_or_huge_one_is_refused(settings, client):
    """AlpacaEval ships its annotations gzipped; a .gz was refused as an unsupported file type."""
    import gzip

    from evalhub.catalog.actions.benchmarks import check_import_file
    from evalhub.catalog.actions.scores import check_score_file
    from tests.conftest import make_user

    summary = do_import_judgments(
        filename="annotations.json.gz",
        data=gzip.compress(json.dumps(ALPACA[:2]).encode()),
        benchmark_slug="alpaca",
        allow_new_models=True,
    )
    assert summary.layout == "alpaca-eval" and summary.counts["judgments_created"] == 2
    benchmark = jsonl({"prompt_id": "p1", "prompt": "Hi?", "model": "gpt-4o", "response": "Hello."})
    assert len(check_import_file("b.jsonl.gz", gzip.compress(benchmark), allow_new_models=True).prompts) == 1
    scores = jsonl({"prompt_id": "p1", "prompt": "Hi?", "model": "m", "response": "Hello.", "rater": "r", "score": 2})
    assert len(check_score_file("s.jsonl.gz", gzip.compress(scores), allow_new_models=True).scores) == 1
    second = jsonl({"prompt_id": "p2", "prompt": "Bye?", "model": "gpt-4o", "response": "Bye."})
    members = gzip.compress(benchmark + b"\n") + gzip.compress(second)  # `cat a.gz b.gz`: one file, two members
    assert len(check_import_file("b.jsonl.gz", members, allow_new_models=True).prompts) == 2

    def refused(data: bytes) -> str:
        with pytest.raises(ImportRejected) as rejected:
            check_import_file("b.jsonl.gz", data, allow_new_models=True)
        return rejected.value.errors[0].message

    assert "is not a readable gzip file" in refused(b"not gzip at all")
    assert "is cut short" in refused(gzip.compress(benchmark)[:-12])
    settings.EVALHUB_MAX_IMPORT_BYTES = 10_000
    assert "unpacks to over 0.0 MB" in refused(gzip.compress(b"\n" * 50_000))  # 50 kB of nothing, packed small

    client.force_login(make_user("ida", "admin"))
    settings.EVALHUB_MAX_IMPORT_BYTES = 10_000_000
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("labels.csv.gz", gzip.compress(GENERIC_CSV.encode()))
    answer = client.post(
        "/judges/import/", {"file": upload, "layout": "auto", "benchmark": "primes", "create_models": "on"}
    )
    assert answer.status_code == 302, answer.content.decode()[:2000]
    assert Judgment.objects.filter(response__prompt__benchmark__slug="primes").count() == 4


def test_after_an_upload_the_message_links_to_the_pages_that_show_it(tmp_path, client):
    """The success message said what was imported and linked nowhere."""
    from tests.conftest import make_user

    client.force_login(make_user("ida", "admin"))
    upload = tmp_path / "arena.jsonl"
    upload.write_bytes(jsonl(*ARENA))
    with upload.open("rb") as file:
        page = client.post(
            "/judges/import/",
            {"file": file, "layout": "auto", "benchmark": "arena", "create_models": "on"},
            follow=True,
        ).content.decode()
    assert "Imported arena.jsonl: " in page
    assert '<a href="/leaderboards/?benchmark=arena">the pairwise board</a>' in page
    assert '<a href="/leaderboards/baseline/?benchmark=arena">win rates against a baseline</a>' in page
    assert '<a href="/judges/?benchmark=arena">the judge lab</a>' in page, "opened on the new data, not every benchmark"
    board = client.get("/leaderboards/?benchmark=arena").content.decode()
    assert "3 battles (Imported human labels: 3)" in board, "the link leads to what was imported"


BLIND_FIRST_STUDY = [  # people's verdicts before and after the aid, and a model judge of the same pairs
    {"prompt_id": f"p{i}", "prompt": f"Question {i}?", "model_a": "alpha", "model_b": "beta",
     "response_a": f"A{i}", "response_b": f"B{i}", "judge": "human-ana", "judge_kind": "human",
     "blind_winner": "b", "winner": "a", "aid": "debate"}
    for i in range(3)
] + [
    {"prompt_id": f"p{i}", "model_a": "alpha", "model_b": "beta", "response_a": f"A{i}",
     "response_b": f"B{i}", "judge": "llm-judge", "judge_kind": "model", "winner": "a"}
    for i in range(3)
]  # fmt: skip


def test_a_blind_first_studys_labels_keep_both_verdicts_and_the_judge_lab_reads_the_blind_one():
    summary = do_import_judgments(
        filename="study.jsonl", data=jsonl(*BLIND_FIRST_STUDY), benchmark_slug="study", allow_new_models=True
    )
    assert summary.counts["judgments_created"] == 6
    person = Judgment.objects.filter(judge_model__slug="human-ana")
    assert set(person.values_list("blind_verdict", "verdict", "aid")) == {(2, 1, "debate")}
    assert set(Judgment.objects.filter(judge_model__slug="llm-judge").values_list("blind_verdict", "aid")) == {
        (None, "")
    }
    blind = next(r for r in compute(Scope(benchmark="study")).judges if r.judge.id == "llm-judge")
    after = next(
        r for r in compute(Scope(benchmark="study", people="after_reveal")).judges if r.judge.id == "llm-judge"
    )
    assert (blind.agreement.value, after.agreement.value) == (0.0, 1.0), (
        "the judge agrees only with what people said after"
    )

    again = do_import_judgments(
        filename="study.jsonl", data=jsonl(*BLIND_FIRST_STUDY), benchmark_slug="study", allow_new_models=True
    )
    assert (again.counts["judgments_unchanged"], again.counts["judgments_replaced"]) == (6, 0)
    edited = [dict(BLIND_FIRST_STUDY[0], blind_winner="a"), *BLIND_FIRST_STUDY[1:]]
    changed = do_import_judgments(
        filename="study.jsonl", data=jsonl(*edited), benchmark_slug="study", allow_new_models=True
    )
    assert changed.counts["judgments_replaced"] == 1
    assert person.filter(response__prompt__external_id="p0").get().blind_verdict == 1


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"blind_winner": "maybe"}, "'blind_winner' must be a, b or tie"),
        ({"blind_winner": "a", "judge": "llm-judge", "judge_kind": "model"}, "this judge is a model"),
        ({"blind_winner": "a", "aid": "a hint"}, "'aid' must be one of debate, critique, none"),
        ({"blind_winner": None, "aid": "debate"}, "give 'blind_winner' too"),
    ],
)
def test_a_blind_verdict_that_cannot_be_one_is_refused_with_its_reason(fields, problem):
    row = {**BLIND_FIRST_STUDY[0], **fields}
    with pytest.raises(ImportRejected) as refused:
        do_import_judgments(filename="study.jsonl", data=jsonl(row), benchmark_slug="study", allow_new_models=True)
    assert [problem in error.message for error in refused.value.errors] == [True]
    assert not Judgment.objects.exists()
