"""Win rates corrected by people: the judge's win rate, people's own, and the judge's corrected by
people's labels on some of the same pairs (PPI++), on the page and in export_winrates."""

from __future__ import annotations

import csv
import io
import json
import logging

import pytest
from django.core.management import call_command
from django.test import Client

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.core.files.judgments import DEFAULT_CRITERION
from evalhub.core.statistics.ppi import classical_mean, labels_needed, ppi_mean
from evalhub.dashboards.baseline_win_rates import Selection, people_preferences
from tests.dashboards.test_baseline_win_rates import BASELINE, JUDGE, imported  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db

LABELLED = 20  # of claude-2.1's 40 pairs, people labelled the first 20


def people_label(records: list[dict], count: int) -> list[dict]:
    """People's verdicts on the first `count` of the judge's pairs, as an annotations file by a person:
    output_2 wins where the judge leaned to it by more than 0.2, else output_1 (a person disagrees
    with the judge now and then)."""
    return [{**r, "annotator": "human_panel", "preference": 2.0 if r["preference"] > 1.7 else 1.0} for r in records][
        :count
    ]


@pytest.fixture
def judged_and_labelled(imported):  # noqa: F811  (the win-rate tests' judged files)
    people = people_label(imported["claude-2.1"], LABELLED)
    do_import_judgments(filename="people.json", data=json.dumps(people).encode(), benchmark_slug="ae")
    return imported, people


def export(tmp_path, *extra: str) -> dict[str, dict[str, str]]:
    out = tmp_path / "winrates.csv"
    call_command(
        "export_winrates", "--benchmark", "ae", "--judge", JUDGE, "--baseline", BASELINE, "--out", str(out), *extra
    )
    return {row["name"]: row for row in csv.DictReader(io.StringIO(out.read_text()))}


def test_the_corrected_win_rate_is_ppi_on_the_judges_preferences_and_peoples_labels(judged_and_labelled, tmp_path):
    files, people = judged_and_labelled
    judge = [r["preference"] - 1 for r in files["claude-2.1"]]
    y = [r["preference"] - 1 for r in people]
    by_hand = ppi_mean(y, judge[:LABELLED], judge[LABELLED:]).scaled(100)
    human = classical_mean(y).scaled(100)
    row = export(tmp_path, "--corrected-by", "people")["claude-2.1"]
    assert int(row["n_human"]) == LABELLED
    assert float(row["corrected_win_rate"]) == pytest.approx(by_hand.value, abs=1e-9)
    assert float(row["corrected_ci_low"]) == pytest.approx(by_hand.low, abs=1e-9)
    assert float(row["corrected_ci_high"]) == pytest.approx(by_hand.high, abs=1e-9)
    assert float(row["human_only_win_rate"]) == pytest.approx(human.value, abs=1e-9)
    assert float(row["human_only_ci_high"]) - float(row["human_only_ci_low"]) == pytest.approx(human.high - human.low)
    assert float(row["corrected_win_rate"]) != pytest.approx(float(row["win_rate"])), "the correction moved it"


def test_a_model_people_never_labelled_has_empty_corrected_columns_that_say_why(judged_and_labelled, tmp_path):
    row = export(tmp_path, "--corrected-by", "people")["phi-2"]
    assert row["n_human"] == "0"
    assert row["corrected_win_rate"] == "" and row["human_only_win_rate"] == ""
    assert "no pair people labelled" in row["corrected_note"]


def test_without_the_flag_the_export_keeps_alpaca_evals_columns_only(judged_and_labelled, tmp_path):
    assert "corrected_win_rate" not in export(tmp_path)["claude-2.1"]


def test_the_page_shows_the_three_numbers_side_by_side_with_peoples_n(client, judged_and_labelled, viewer, login):
    page = login(viewer).get("/leaderboards/baseline/", {"baseline": BASELINE, "judge": JUDGE}).content.decode()
    assert "Corrected by people (95 %)" in page and "People only (95 %)" in page
    assert f'data-sort="{LABELLED}">{LABELLED} · ' in page
    exported = login(viewer).get(f"/leaderboards/baseline.csv?benchmark=ae&judge={JUDGE}&baseline={BASELINE}")
    assert "corrected_win_rate" in exported.content.decode().splitlines()[0]


def test_an_adjudicated_debate_counts_as_peoples_label_for_the_model_it_named(judged_and_labelled):
    from evalhub.debates.actions import do_create_run
    from evalhub.debates.models import DebateStatus, Winner

    run = do_create_run(
        name="people decide",
        benchmark=Benchmark.objects.get(slug="ae"),
        criterion=Criterion.objects.get(slug=DEFAULT_CRITERION),
        model_a=LanguageModel.objects.get(slug=BASELINE),
        model_b=LanguageModel.objects.get(slug="phi-2"),
        agents=["heuristic"],
    )
    first, second = run.debates.order_by("id")[:2]
    first.status, first.winner = DebateStatus.ADJUDICATED, Winner.B  # phi-2 (model B) won
    second.status, second.winner = DebateStatus.ADJUDICATED, Winner.A  # the baseline won
    for debate in (first, second):
        debate.save(update_fields=["status", "winner"])
    labels = people_preferences(Selection("ae", JUDGE, BASELINE, DEFAULT_CRITERION))
    assert labels[("phi-2", str(first.prompt_id))] == 1.0
    assert labels[("phi-2", str(second.prompt_id))] == 0.0
    assert sum(model == "claude-2-1" for model, _ in labels) == LABELLED


def test_the_judges_page_shows_its_ratings_corrected_by_people_on_the_same_battles(judged_and_labelled, login, viewer):
    from evalhub.judgelab.report import judge_key

    files, _ = judged_and_labelled
    more = people_label(files["phi-2"], LABELLED)  # people label phi-2's battles too: every model is measured
    do_import_judgments(filename="people-2.json", data=json.dumps(more).encode(), benchmark_slug="ae")
    client = login(viewer)
    page = client.get(f"/judges/{judge_key(JUDGE)}/").content.decode()
    assert "Its ratings, corrected by people" in page
    assert f"{2 * LABELLED} battles they labelled too" in page
    assert "People's labels here are their blind verdicts" in page, "the page says which verdicts"
    assert (
        "their verdicts after the reveal"
        in client.get(f"/judges/{judge_key(JUDGE)}/?people=after_reveal").content.decode()
    )
    exported = json.loads(client.get("/judges/report.json").content)
    mine = next(judge for judge in exported["judges"] if judge["id"] == JUDGE)["corrected_ratings"]
    assert (mine["n_human"], mine["n_judge"]) == (2 * LABELLED, 80)
    assert mine["intervals"] == "cluster-robust by prompt (40 prompts)" and mine["prompts"] == 40
    assert sum(rating["corrected"] for rating in mine["ratings"]) == pytest.approx(3000), "three models, centred"
    people = next(judge for judge in exported["judges"] if judge["id"] == "human_panel")
    assert people["corrected_ratings"] is None, "people are not corrected by themselves"


def test_the_pairwise_board_loads_the_same_corrected_ratings_for_the_judges_it_shows(
    judged_and_labelled, login, viewer
):
    from evalhub.judgelab.report import judge_key

    files, _ = judged_and_labelled
    more = people_label(files["phi-2"], LABELLED)
    do_import_judgments(filename="people-2.json", data=json.dumps(more).encode(), benchmark_slug="ae")
    client = login(viewer)
    board = client.get("/leaderboards/", {"source": ["imported_judges"], "benchmark": "ae"}).content.decode()
    assert "/judges/corrected-boards/?benchmark=ae&amp;criterion=&amp;kind=model" in board, "loaded after the board"
    people_board = client.get("/leaderboards/", {"source": ["imported_people"]}).content.decode()
    assert "corrected-boards" not in people_board, "a board of people's labels has nothing to correct"
    section = client.get("/judges/corrected-boards/", {"benchmark": "ae", "kind": "model"}).content.decode()
    judge_page = client.get(f"/judges/{judge_key(JUDGE)}/").content.decode()
    assert 'id="corrected-boards"' in section and JUDGE in section
    assert f"{2 * LABELLED} labelled by people too" in section
    table = section[section.index("<table") : section.index("</table>")]
    assert table in judge_page, "the judge's page shows the same table, number for number"
    assert "human_panel" not in section, "people are not corrected by themselves"
    # No panel judged here: the section says why it has no table, rather than loading an empty body.
    none = client.get("/judges/corrected-boards/", {"benchmark": "ae", "kind": "panel"}).content.decode()
    assert "People labelled none of the battles this board's judges judged" in none
    assert Client().get("/judges/corrected-boards/").status_code == 302, "login first"


def test_the_page_says_how_many_labels_reach_a_chosen_width_and_refuses_a_bad_target(
    judged_and_labelled, viewer, login
):
    from evalhub.dashboards.win_rate_boards import board

    client = login(viewer)
    row = next(r for r in board(Selection("ae", JUDGE, BASELINE, DEFAULT_CRITERION)) if r["name"] == "claude-2.1")
    corrected = row["corrected"]
    half_width = (corrected["corrected_ci_high"] - corrected["corrected_ci_low"]) / 2
    floor = 1.959963984540054 * corrected["judge_term"] ** 0.5  # the judge's own part, which labels do not shrink
    for share in (0.9, 0.8, 0.7, 0.6, 0.5):  # a target narrower than today's, within the 40 pairs judged
        target = round(floor + (half_width - floor) * share, 2)
        needed = labels_needed(corrected["label_variance"], corrected["judge_term"], target)
        if LABELLED < needed <= row["n_total"]:
            break
    assert LABELLED < needed <= row["n_total"]
    page = client.get("/leaderboards/baseline/", {"judge": JUDGE, "baseline": BASELINE, "target": target})
    html = page.content.decode()
    assert f"Labels for ± {target}" in html
    assert f'{needed} <small class="muted">({needed - LABELLED} more)</small>' in html
    refused = client.get("/leaderboards/baseline/", {"judge": JUDGE, "baseline": BASELINE, "target": "lots"})
    assert "is not a number of points" in refused.content.decode()


def test_labels_needed_past_the_pairs_the_judge_judged_are_called_not_reachable_not_counted(
    judged_and_labelled, viewer, login
):
    from evalhub.dashboards.win_rate_boards import board

    row = next(r for r in board(Selection("ae", JUDGE, BASELINE, DEFAULT_CRITERION)) if r["name"] == "claude-2.1")
    corrected = row["corrected"]
    half_width = (corrected["corrected_ci_high"] - corrected["corrected_ci_low"]) / 2
    floor = 1.959963984540054 * corrected["judge_term"] ** 0.5
    for share in (0.5, 0.2, 0.1, 0.05, 0.02, 0.01):  # nearer the judge's own floor, more labels
        target = round(floor + (half_width - floor) * share, 2)
        needed = labels_needed(corrected["label_variance"], corrected["judge_term"], target)
        if needed is not None and needed > row["n_total"]:
            break
    assert needed is not None and needed > row["n_total"] == 40
    html = login(viewer).get("/leaderboards/baseline/", {"judge": JUDGE, "baseline": BASELINE, "target": target})
    text = html.content.decode()
    assert "not reachable with these pairs: it needs more labels than the 40 pairs judged" in text
    assert f"{needed} <small" not in text


def test_a_win_rates_intervals_stay_between_0_and_100():
    from evalhub.core.statistics.corrected_win_rates import corrected_win_rate

    judge = {f"p{i}": 0.95 for i in range(40)}
    people = {f"p{i}": 1.0 if i else 0.0 for i in range(10)}  # 9 of 10 for the model: mean ± 1.96·SE passes 1
    row = corrected_win_rate("m", judge, people)
    assert row.human_only_ci_high == 100.0 and row.human_only_ci_low < 90
    assert 0.0 <= row.corrected_ci_low <= row.corrected_win_rate <= row.corrected_ci_high <= 100.0


def test_an_admin_sends_unlabelled_pairs_to_peoples_queue_and_their_verdicts_feed_the_correction(
    judged_and_labelled, admin_user, adjudicator, viewer, login
):
    from evalhub.adjudication.actions import do_reserve_next, do_submit
    from evalhub.adjudication.models import AdjudicationItem
    from evalhub.dashboards.baseline_win_rates import corrected_rows
    from evalhub.debates.models import DebateRun

    query = f"?judge={JUDGE}&baseline={BASELINE}"
    assert (
        login(viewer).post(f"/leaderboards/baseline/ask-people/{query}", {"model": "phi-2", "count": 5}).status_code
        == 403
    )
    client = login(admin_user)
    assert 'id="ask-people"' in client.get(f"/leaderboards/baseline/{query}").content.decode()
    response = client.post(f"/leaderboards/baseline/ask-people/{query}", {"model": "phi-2", "count": 12})
    run = DebateRun.objects.get(name__startswith="People's labels: phi-2")
    assert response.status_code == 302 and response["Location"] == run.get_absolute_url()
    assert run.agents == [] and run.debates.count() == 12
    assert AdjudicationItem.objects.filter(debate__run=run, status="open").count() == 12
    run_page = client.get(run.get_absolute_url()).content.decode()
    assert "With people" in run_page and "Draft" not in run_page and ">Start</button>" not in run_page
    assert client.get(run.debates.first().get_absolute_url()).status_code == 200
    person = Client()  # another browser: the admin's stays signed in
    person.force_login(adjudicator)
    screen = person.get(person.post("/adjudicate/start/")["Location"]).content.decode()
    assert "Submission 1" in screen and "The agents' debate" not in screen, "no agents: people judge the pair alone"
    selection = Selection("ae", JUDGE, BASELINE, DEFAULT_CRITERION)
    assert corrected_rows(selection)["phi-2"].n_human == 0
    for _ in range(12):  # people decide each pair, blind, through the queue
        reservation = do_reserve_next(adjudicator)
        do_submit(adjudicator, reservation.item_id, 1)
    assert corrected_rows(selection)["phi-2"].n_human == 12, "people's verdicts are labels for the correction"
    again = client.post(f"/leaderboards/baseline/ask-people/{query}", {"model": "phi-2", "count": 100})
    assert DebateRun.objects.filter(name__startswith="People's labels: phi-2").count() == 2
    assert again.status_code == 302
    latest = DebateRun.objects.filter(name__startswith="People's labels: phi-2").order_by("-id").first()
    assert latest.debates.count() == 40 - 12, "only pairs nobody labelled, and no more than are left"
    assert (run.name.endswith(", ask 1"), latest.name.endswith(", ask 2")) == (True, True), "each ask its own name"
    refused = client.post(f"/leaderboards/baseline/ask-people/{query}", {"model": "nobody", "count": 3}, follow=True)
    assert "compared no pair of &#x27;nobody&#x27;" in refused.content.decode()


def test_a_models_page_shows_the_same_corrected_numbers_as_the_win_rate_page(judged_and_labelled, viewer, login):
    from evalhub.dashboards.win_rate_boards import board

    row = next(r for r in board(Selection("ae", JUDGE, BASELINE, DEFAULT_CRITERION)) if r["name"] == "claude-2.1")
    corrected = row["corrected"]
    page = login(viewer).get("/models/claude-2-1/").content.decode()
    assert 'id="win-rates"' in page
    assert f"{corrected['corrected_win_rate']:.2f}" in page
    assert f"[{corrected['corrected_ci_low']:.2f}, {corrected['corrected_ci_high']:.2f}]" in page
    assert f"{corrected['human_only_win_rate']:.2f}" in page
    from evalhub.dashboards.win_rate_boards import for_model

    shown, pending = for_model(BASELINE)
    assert not pending and all(w["selection"]["judge"] != JUDGE for w in shown), "the baseline is not its own rival"


def test_a_judge_whose_battles_people_labelled_too_few_of_is_named_with_why(judged_and_labelled, login, viewer):
    files, _ = judged_and_labelled
    records = files["phi-2"]
    do_import_judgments(filename="j.json", data=json.dumps(records).encode(), benchmark_slug="few")
    do_import_judgments(filename="p.json", data=json.dumps(people_label(records, 3)).encode(), benchmark_slug="few")
    section = login(viewer).get("/judges/corrected-boards/", {"benchmark": "few", "kind": "model"}).content.decode()
    assert "Not corrected:" in section and "3 battles people labelled: too few" in section


def test_a_judge_people_never_labelled_has_no_corrected_section(judged_and_labelled, login, viewer):
    from evalhub.judgelab.report import compute, judge_key
    from evalhub.reads.judged_pairs import Scope

    do_import_judgments(
        filename="other.json",
        data=json.dumps([{**r, "annotator": "another_judge"} for r in judged_and_labelled[0]["phi-2"]]).encode(),
        benchmark_slug="other",
        allow_new_models=True,
    )
    report = compute(Scope(benchmark="other"))
    judge = next(r for r in report.judges if r.judge.id == "another_judge")
    assert judge.corrected is None
    page = login(viewer).get(f"/judges/{judge_key('another_judge')}/", {"benchmark": "other"}).content.decode()
    assert "corrected by people" not in page


def test_pairs_drawn_where_the_judge_is_least_sure_are_weighted_by_their_chance_in_the_correction(
    judged_and_labelled, admin_user, adjudicator, login
):
    import numpy as np

    from evalhub.adjudication.actions import do_reserve_next, do_submit
    from evalhub.core.statistics.ppi import active_mean, inclusion_probability
    from evalhub.dashboards.baseline_win_rates import comparisons, corrected_rows
    from evalhub.debates.models import DebateRun

    selection = Selection("ae", JUDGE, BASELINE, DEFAULT_CRITERION)
    query = f"?judge={JUDGE}&baseline={BASELINE}"
    client = login(admin_user)
    assert "where the judge is least sure" in client.get(f"/leaderboards/baseline/{query}").content.decode()
    for _ in range(5):  # each pair has a chance: a draw may choose none, and then says so
        sent = client.post(
            f"/leaderboards/baseline/ask-people/{query}", {"model": "claude-2-1", "count": 10, "rule": "least-sure"}
        )
        run = DebateRun.objects.filter(name__startswith="People's labels: claude-2-1").first()
        if run is not None:
            break
    assert sent.status_code == 302 and run is not None
    judged = {c.prompt: c.preference for c in comparisons(selection) if c.model == "claude-2-1"}
    chances = run.labelling_chances
    assert set(chances) == set(judged), "every judged pair had a chance, labelled or not"
    assert all(0 < c <= 1 for c in chances.values())
    drawn = {str(p) for p in run.debates.values_list("prompt_id", flat=True)}
    before = {p for (m, p) in people_preferences(selection) if m == "claude-2-1"}
    assert drawn and not drawn & before, "only pairs nobody labelled yet are sent"
    waiting = corrected_rows(selection)["claude-2-1"]
    assert f"{len(drawn)} drawn still await people's labels" in waiting.note
    # Weighted as if every drawn pair were labelled, the ones labelled first would bias it: it waits.
    assert waiting.corrected_win_rate is None and waiting.corrected_ci_low is None
    for _ in drawn:  # people prefer the model on each pair they are shown
        reservation = do_reserve_next(adjudicator)
        debate = run.debates.get(adjudication_item__pk=reservation.item_id)
        b_seen_first = debate.swapped != reservation.swapped  # the debate's order, then the screen's
        do_submit(adjudicator, reservation.item_id, 1 if b_seen_first else 2)
    people = {p: v for (m, p), v in people_preferences(selection).items() if m == "claude-2-1"}
    assert [people[p] for p in drawn] == [1.0] * len(drawn)
    prompts = list(judged)
    labelled = np.array([p in people for p in prompts])
    inclusion = inclusion_probability(LABELLED / len(prompts), [[chances[p] for p in prompts]])
    said = [people[p] for p in prompts if p in people]
    by_hand = active_mean([judged[p] for p in prompts], labelled, said, inclusion)
    row = corrected_rows(selection)["claude-2-1"]
    assert row.n_human == LABELLED + len(drawn)
    assert row.corrected_win_rate == pytest.approx(100 * by_hand.value)
    assert row.corrected_ci_low == pytest.approx(100 * by_hand.low)
    assert f"{len(drawn)} drawn where the judge was least sure" in row.note and "await" not in row.note
    bad = client.post(f"/leaderboards/baseline/ask-people/{query}", {"model": "claude-2-1", "count": 3, "rule": "x"})
    assert bad.status_code == 302 and DebateRun.objects.filter(name__startswith="People's labels").count() == 1


def test_a_new_label_by_people_costs_no_new_length_controlled_fit_but_a_judges_new_verdict_does(
    judged_and_labelled, viewer, login, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    from evalhub.dashboards import win_rate_boards as module

    fits = []  # how many comparisons each fit was of: the judge's are all its pairs, people's fewer
    real = module.win_rates
    monkeypatch.setattr(module, "win_rates", lambda found: fits.append(len(found)) or real(found))
    files, people = judged_and_labelled
    client = login(viewer)
    page = {"judge": JUDGE, "baseline": BASELINE}
    assert client.get("/leaderboards/baseline/", page).status_code == 200 and len(fits) == 1
    judges = fits[0]
    one_more = people_label(files["claude-2.1"], LABELLED + 1)[LABELLED:]
    do_import_judgments(filename="more.json", data=json.dumps(one_more).encode(), benchmark_slug="ae")
    after = client.get("/leaderboards/baseline/", page)
    row = next(r for r in after.context["rows"] if r["name"] == "claude-2.1")
    assert row["corrected"]["n_human"] == LABELLED + 1, "the page shows the new label"
    assert fits.count(judges) == 1, "and the judge's fit, which the label does not change, is not redone"
    edited = [{**files["phi-2"][0], "preference": 2.0 if files["phi-2"][0]["preference"] < 1.5 else 1.0}]
    with django_capture_on_commit_callbacks(execute=True):  # an edit in place: the version moves on commit
        do_import_judgments(filename="judge.json", data=json.dumps(edited).encode(), benchmark_slug="ae")
    client.get("/leaderboards/baseline/", page)
    assert fits.count(judges) == 2, "a judge's changed preference is a new fit"


def test_a_large_board_is_computed_by_a_worker_while_the_pages_show_the_last_one_marked_with_its_age(
    judged_and_labelled, viewer, login, monkeypatch, django_capture_on_commit_callbacks, caplog
):
    from evalhub.core.statistics.estimators import Correction
    from evalhub.dashboards import win_rate_boards as module

    monkeypatch.setattr(module, "BACKGROUND_AT", 10)  # AlpacaEval's shape here counts as large
    fits, asked = [], []
    real = module.win_rates
    monkeypatch.setattr(module, "win_rates", lambda found: fits.append(1) or real(found))

    class Task:  # a worker that has not started yet: the boards it is asked for are recorded
        def __init__(self, name: str) -> None:
            self.name = name

        def apply_async(self, args):
            if self.name == module.REFRESH_TASK:
                asked.append(args)

    monkeypatch.setattr(module, "task_named", Task)

    def worker() -> None:
        with django_capture_on_commit_callbacks(execute=True):
            module.refresh(Selection(**asked[-1][0]), Correction(**asked[-1][1]))

    files, _ = judged_and_labelled
    client = login(viewer)
    page = {"judge": JUDGE, "baseline": BASELINE}
    first = client.get("/leaderboards/baseline/", page)
    assert not fits and 'id="board-pending"' in first.content.decode(), "nothing kept yet: a worker computes it"
    pending = client.get("/models/claude-2-1/").content.decode()
    assert 'id="win-rates-pending"' in pending and f"{JUDGE}'s board (a worker is computing it)" in pending
    assert len(asked) == 1, "one worker asked, however many pages ask"
    worker()
    shown = client.get("/leaderboards/baseline/", page)
    assert "board-freshness" not in shown.content.decode() and "board-pending" not in shown.content.decode()
    before = {r["name"]: r["win_rate"] for r in shown.context["rows"]}
    edited = [{**r, "preference": 1.0} for r in files["phi-2"][:10]]  # the judge changes its mind
    with django_capture_on_commit_callbacks(execute=True):
        do_import_judgments(filename="judge.json", data=json.dumps(edited).encode(), benchmark_slug="ae")
    fitted = len(fits)
    stale = client.get("/leaderboards/baseline/", page)
    assert len(fits) == fitted, "no fit in the request"
    assert 'id="board-freshness"' in stale.content.decode() and "a worker is computing" in stale.content.decode()
    assert {r["name"]: r["win_rate"] for r in stale.context["rows"]} == before, "the last board, marked"
    assert "as of" in client.get("/models/phi-2/").content.decode(), "the model page marks it too"
    with caplog.at_level(logging.INFO):
        waiting = client.get("/leaderboards/baseline.csv", page)
    assert waiting.status_code == 503 and waiting["Retry-After"] == "30", "a file never holds the last board"
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], "a wait the client is told of is no error"
    assert "board export not ready" in caplog.text
    assert "A worker is computing this board" in waiting.content.decode() and len(fits) == fitted
    assert len(asked) == 2
    worker()
    fresh = client.get("/leaderboards/baseline/", page)
    assert "board-freshness" not in fresh.content.decode()
    phi = next(r for r in fresh.context["rows"] if r["model"] == "phi-2")
    assert phi["win_rate"] < before[phi["name"]], "the worker's board of the edited verdicts"
    exported = client.get("/leaderboards/baseline.csv", page)
    assert exported.status_code == 200 and f"{phi['win_rate']:.4f}"[:5] in exported.content.decode()


def test_while_no_worker_can_be_asked_no_page_or_export_says_one_is_computing(
    judged_and_labelled, viewer, login, monkeypatch
):
    from evalhub.dashboards import win_rate_boards as module

    monkeypatch.setattr(module, "BACKGROUND_AT", 10)

    class Broker:  # the broker does not answer
        def __init__(self, name: str) -> None:
            pass

        def apply_async(self, args):
            raise ConnectionError("broker down")

    monkeypatch.setattr(module, "task_named", Broker)
    client = login(viewer)
    page = {"judge": JUDGE, "baseline": BASELINE}
    board = client.get("/leaderboards/baseline/", page).content.decode()
    assert "No worker could be asked for this board" in board and "A worker is computing" not in board
    model = client.get("/models/claude-2-1/").content.decode()
    assert "no worker could be asked: the broker did not answer" in model and "a worker is computing" not in model
    export = client.get("/leaderboards/baseline.csv", page)
    assert export.status_code == 503 and "No worker could be asked" in export.content.decode()
