"""Single-judge runs against the debate reference: agreement, self-consistency, position bias."""

from __future__ import annotations

import itertools

import pytest

from evalhub.core.prompts import sections as ps
from evalhub.debates.actions import do_create_judge_run
from evalhub.debates.judging import meta_evaluation
from evalhub.debates.models import DebateStatus, JudgeVerdict
from evalhub.jobs.models import JobStatus
from tests.debates.conftest import sections_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def reference(make_run):
    """Three math debates with a known reference: 1, 2, and one still waiting for people."""
    run = make_run()
    first, second, third = run.debates.order_by("id")
    for debate, status, verdict in (
        (first, DebateStatus.CONSENSUS, 1),
        (second, DebateStatus.CONSENSUS, 2),
        (third, DebateStatus.UNRESOLVED, None),
    ):
        debate.status, debate.verdict = status, verdict
        debate.save()
    return run


def judge(reference, **fields):
    return do_create_judge_run(reference=reference, **{"judge": "scripted-0", "check_position": False, **fields})


def test_a_judge_that_always_says_1_agrees_on_half_the_decided_pairs_and_flips_on_every_reversal(reference, agents):
    agents(lambda agent, messages: "First.\n1")
    run = judge(reference, check_position=True)
    (report,), with_reference, waiting = meta_evaluation(reference)
    assert (with_reference, waiting) == (2, 1)
    assert (report.example.hits, report.example.total, report.example.rate) == (1, 2, 0.5)
    assert report.system is None, "the reference's modes tie (one 1, one 2)"
    assert (report.flips.hits, report.flips.total) == (3, 3), "saying 1 in both orders contradicts itself every time"
    run.job.refresh_from_db()
    assert run.verdicts.count() == 6
    assert run.job.status == JobStatus.SUCCEEDED
    assert run.job.progress_done == 6


def test_a_judge_that_reads_the_submissions_agrees_fully_and_never_flips(reference, agents):
    decided = {d.pk: d for d in reference.debates.all()}
    better = {}
    for debate in decided.values():
        first, second = debate.shown
        if debate.verdict:
            better[debate.prompt.text] = (first if debate.verdict == 1 else second).text
        else:
            better[debate.prompt.text] = first.text

    def consistent(agent, messages):
        sections = sections_of(messages)
        return "x\n" + ("1" if sections[ps.SUBMISSION_1] == better[sections[ps.QUESTION]] else "2")

    agents(consistent)
    judge(reference, check_position=True)
    (report,), _, _ = meta_evaluation(reference)
    assert (report.example.rate, report.system, report.flips.hits) == (1.0, None, 0)


def test_self_consistency_takes_the_majority_of_k_samples(reference, agents):
    answers = itertools.cycle(["x\n2", "x\n1", "x\n2"])  # per pair: 2, 1, 2 → majority 2
    agents(lambda agent, messages: next(answers))
    judge(reference, samples=3, temperature=0.7)
    (report,), _, _ = meta_evaluation(reference)
    assert (report.example.hits, report.example.total) == (1, 2)
    assert JudgeVerdict.objects.count() == 9


def test_the_variant_and_privileged_information_reach_the_judge(reference, agents):
    log = agents(lambda agent, messages: "x\n1")
    judge(reference, criteria_variant="masked", privileged_sources=["reference_answer"])
    prompts = [sections_of(m) for m in log]
    assert all("_" in p[ps.CRITERIA] for p in prompts)
    definition = reference.criterion.definition
    assert all(definition not in p[ps.CRITERIA] for p in prompts), "a variant hides the plain definition too"
    assert any(title.startswith("Reference answer (visible to evaluators only") for title in prompts[0])


def test_a_judge_run_resumed_asks_only_for_what_is_missing(reference, agents):
    log = agents(lambda agent, messages: "x\n1")
    run = judge(reference)
    asked = len(log)
    from evalhub.jobs.models import Job, JobChunk
    from evalhub.jobs.runners import work_chunk

    # As if its worker died after the calls and before recording: the chunk runs again.
    Job.objects.filter(pk=run.job_id).update(status="running", progress_done=0)
    JobChunk.objects.filter(job=run.job).update(done_at=None)
    assert [work_chunk(pk) for pk in run.job.chunks.values_list("pk", flat=True)] == ["recorded"]
    assert len(log) == asked, "nothing stored is asked again"
    assert run.verdicts.count() == 3


def test_a_plain_vote_of_several_judges_is_reported_and_named_for_what_it_is(reference, agents):
    agents(lambda agent, messages: f"x\n{agent + 1}")  # scripted-0 says 1, scripted-1 says 2
    judge(reference, judge="scripted-0")
    judge(reference, judge="scripted-1")
    judge(reference, judge="scripted-0", seed=3)
    reports, _, _ = meta_evaluation(reference)
    assert [r.label for r in reports][-1] == "Plain vote of the judges above"
    assert (reports[-1].example.hits, reports[-1].example.total, reports[-1].ties) == (1, 2, 0)


def test_a_tied_vote_is_reported_apart_not_counted_as_a_miss(reference, agents):
    agents(lambda agent, messages: f"x\n{agent + 1}")
    judge(reference, judge="scripted-0")
    judge(reference, judge="scripted-1")  # one says 1, the other 2: every vote ties
    reports, _, _ = meta_evaluation(reference)
    vote = reports[-1]
    assert vote.ties == 2
    assert vote.example.total == 0  # the two pairs with a reference
    assert (vote.coverage.hits, vote.coverage.total) == (0, 2)


def test_an_unparsable_judge_answer_counts_as_invalid_and_as_a_miss(reference, agents):
    agents(lambda agent, messages: "I cannot decide.")
    judge(reference)
    (report,), _, _ = meta_evaluation(reference)
    assert report.invalid == 3
    assert report.example.hits == 0
    assert report.example.total == 2


def test_only_admins_start_judge_runs_and_viewers_read_the_report(login, viewer, admin_user, reference, agents):
    agents(lambda agent, messages: "x\n1")
    url = f"/debates/runs/{reference.pk}/judges/"
    assert login(viewer).get(url).status_code == 200
    assert login(viewer).post(url, {"judge": "heuristic"}).status_code == 403
    form = {
        "judge": "heuristic",
        "criteria_variant": "shuffled",
        "samples": 1,
        "temperature": 0,
        "max_tokens": 256,
        "seed": 0,
        "check_position": "on",
    }
    assert login(admin_user).post(url, form).status_code == 302
    body = login(viewer).get(url).content.decode()
    assert "heuristic:balanced (shuffled)" in body
    assert "Position flips" in body
    bad = login(admin_user).post(url, {**form, "judge": "opneai:x", "samples": 3})
    assert bad.status_code == 400
    assert "Did you mean" in bad.content.decode()


def test_a_human_adjudication_joins_the_reference_once_given(reference, agents):
    from datetime import timedelta

    from django.utils import timezone

    from evalhub.adjudication.models import AdjudicationItem, Reservation
    from tests.adjudication.verdicts import give_verdict
    from tests.conftest import make_user

    agents(lambda agent, messages: "x\n1")
    judge(reference)
    assert meta_evaluation(reference)[1:] == (2, 1)
    unresolved = reference.debates.get(status=DebateStatus.UNRESOLVED)
    item = AdjudicationItem.objects.create(debate=unresolved)
    person = make_user("person", "adjudicator")
    Reservation.objects.create(item=item, user=person, swapped=False, expires_at=timezone.now() + timedelta(minutes=5))
    give_verdict(person, item.pk, 1)
    (report,), with_reference, waiting = meta_evaluation(reference)
    assert (with_reference, waiting) == (3, 0)
    assert (report.example.hits, report.example.total) == (2, 3)


def test_a_judge_that_failed_every_call_fails_its_run_naming_it_with_the_first_error(reference, agents):
    from evalhub.jobs.models import Job
    from tests.debates.conftest import ProviderUnavailable

    agents(lambda agent, messages: ProviderUnavailable("scripted", "m", "server error (HTTP 503)"))
    run = judge(reference)
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.FAILED
    assert job.message.startswith("Judge scripted-0 failed every call: scripted:m: server error (HTTP 503)")
    assert job.units_failed == 3
    assert not run.verdicts.exists()


def test_a_judge_with_some_failed_calls_finishes_partial_and_retry_failed_asks_only_for_those(reference, agents):
    from evalhub.jobs.chunks import do_resume_job
    from evalhub.jobs.models import Job
    from tests.debates.conftest import ProviderUnavailable

    flaky = {"left": 1}

    def answer(agent, messages):
        if flaky["left"]:
            flaky["left"] -= 1
            return ProviderUnavailable("scripted", "m", "timed out")
        return "x\n1"

    log = agents(answer)
    run = judge(reference)
    job = Job.objects.get(pk=run.job_id)
    assert (job.status, job.status_words, run.verdicts.count()) == (JobStatus.PARTIAL, "Finished with 1 failed", 2)
    assert job.can_resume
    asked = len(log)
    do_resume_job(job)  # Retry failed: eager in tests
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert run.verdicts.count() == 3
    assert len(log) - asked == 1, "only the failed pair is asked again"


def test_the_judge_pairs_command_runs_the_same_job_and_prints_its_outcome(reference, agents):
    from io import StringIO

    from django.core.management import CommandError, call_command

    agents(lambda agent, messages: "x\n2")
    out = StringIO()
    call_command("judge_pairs", "--run", str(reference.pk), "--judge", "heuristic", "--no-position-check", stdout=out)
    assert ": Succeeded. 3 judgments" in out.getvalue()
    with pytest.raises(CommandError, match="samples"):
        call_command("judge_pairs", "--run", str(reference.pk), "--judge", "heuristic", "--samples", "3")
    with pytest.raises(CommandError, match="heuristc"):
        call_command("judge_pairs", "--run", str(reference.pk), "--judge", "heuristc")


def test_cancel_mid_chunk_stops_a_judge_run_between_calls_and_stores_none_of_the_chunk(reference, agents):
    import threading
    import time

    from django.db import connections
    from django.test import override_settings

    from evalhub.jobs.actions import do_request_stop
    from evalhub.jobs.chunks import pending_chunk_ids
    from evalhub.jobs.models import Job
    from evalhub.jobs.runners import work_chunk

    run = do_create_judge_run(reference=reference, judge="scripted-0", samples=3, temperature=0.5, enqueue=False)
    cancelled = threading.Event()

    def answer(agent, messages):
        if not cancelled.is_set():
            cancelled.set()
            stop = lambda: (do_request_stop(Job.objects.get(pk=run.job_id), "cancel"), connections.close_all())  # noqa: E731
            worker = threading.Thread(target=stop)
            worker.start()
            worker.join()
            time.sleep(0.3)  # the chunk's heartbeat reads the request
        return "x\n1"

    log = agents(answer)
    [chunk] = pending_chunk_ids(run.job)
    with override_settings(EVALHUB_HEARTBEAT_SECONDS=0.05):
        assert work_chunk(chunk) == "cancel"
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.CANCELLED
    # The calls already past the client's concurrency gate (8) finish; none starts after the stop.
    assert len(log) <= 8 < 3 * 3 * 2
    assert not run.verdicts.exists(), "nothing of the stopped chunk is stored"


def test_a_half_finished_judge_run_shows_the_same_agreement_on_its_run_page_and_the_judges_board(
    reference, agents, client
):
    """One definition (core.agreement.judged_pairs): pairs not judged yet are left out and shown as
    coverage, on both pages; before, the run page counted them as misses."""
    import re

    from django.core.cache import cache

    from tests.conftest import make_user

    agents(lambda agent, messages: "x\n1")
    run = judge(reference)  # judges both pairs with a reference (1 and 2): agreement 1 of 2
    first = reference.debates.order_by("id").first()
    run.verdicts.exclude(debate=first).delete()  # as if the judge had answered only the first pair so far
    cache.clear()
    client.force_login(make_user("v", "viewer"))
    page = client.get(f"/debates/runs/{reference.pk}/judges/").content.decode()
    board = client.get("/leaderboards/?sources=judges").content.decode()
    assert "1.000 <small>(1/1)</small>" in page
    assert "judged 1 of 2" in page
    row = board.split("<code>scripted-0</code>", 1)[1].split("</tr>", 1)[0]
    assert re.search(r'<span data-sort="1.0">1.000 <small class="muted">\(1/1\)</small></span>', row), row
    assert "judged 1 of 2" in row


def test_a_graded_run_asks_figure_8s_prompt_and_stores_grades_whose_sign_is_the_verdict(reference, agents):
    from io import StringIO

    from django.core.management import call_command

    answers = itertools.cycle(["Both fine. [[A >> B]]", "Hmm. [[B > A]]", "No verdict here.", "[[A = B]]"])
    log = agents(lambda agent, messages: next(answers))
    out = StringIO()
    call_command("judge_pairs", "--run", str(reference.pk), "--judge", "heuristic", "--scale", "graded", stdout=out)
    run = reference.judge_runs.get()
    assert run.scale == "graded" and "graded" in str(run)
    assert all("[[A >> B]]" in m[-1]["content"] and "Response A" in m[-1]["content"] for m in log if len(m) == 1)
    stored = list(run.verdicts.order_by("id").values_list("grade", "verdict", "reasked"))
    assert len(stored) == 6
    for grade, verdict, _ in stored:
        assert verdict == (None if grade is None else 1 if grade > 0 else 2 if grade < 0 else 0)
    assert any(reasked for _, _, reasked in stored), "an answer without a verdict is asked once more"
    assert {grade for grade, _, _ in stored} <= {2, -1, 0, None}


def test_a_judge_run_on_a_reasoning_model_succeeds_against_a_server_that_keeps_openais_rules(reference, monkeypatch):
    """gpt-5-mini refuses max_tokens and any temperature but the default (as OpenAI's API does, and the
    test server with it); every call failed before. Now every verdict is read, and the job counts the
    reasoning tokens."""
    from io import StringIO

    from django.core.management import call_command

    from evalhub.jobs.models import Job
    from evalhub.llm.testing import REASONING_TOKENS, FakeLLMServer

    with FakeLLMServer(reply=lambda messages: "The first is right.\n1", api_key="test-key") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        out = StringIO()
        call_command("judge_pairs", "--run", str(reference.pk), "--judge", "openai:gpt-5-mini", stdout=out)
        bodies = [request["body"] for request in server.state.requests]
    assert ": Succeeded." in out.getvalue(), out.getvalue()
    verdicts = JudgeVerdict.objects.filter(judge_run__judge="openai:gpt-5-mini")
    assert verdicts.count() == 6 and not verdicts.filter(verdict__isnull=True).exists()
    assert all("max_completion_tokens" in body and "temperature" not in body for body in bodies)
    job = Job.objects.get(pk=verdicts.first().judge_run.job_id)
    assert job.usage_value.reasoning_tokens == 6 * REASONING_TOKENS


def test_the_judge_form_takes_k_samples_of_a_reasoning_model_at_its_default_temperature(reference):
    """A reasoning model is sent no temperature and samples at its own: k samples at 'temperature 0'
    differ, so the form does not refuse them (it still does for a model that takes a temperature)."""
    from evalhub.debates.forms import JudgeRunForm

    fields = {"criteria_variant": "original", "samples": 3, "temperature": 0, "max_tokens": 512, "seed": 0}
    assert JudgeRunForm({**fields, "judge": "openai:gpt-5-mini"}).is_valid()
    assert JudgeRunForm({**fields, "judge": "openai-compatible:http://h/v1|local?reasoning=true"}).is_valid()
    refused = JudgeRunForm({**fields, "judge": "openai:gpt-4o-mini"})
    assert not refused.is_valid() and "temperature above 0" in str(refused.errors)


def test_a_judge_run_with_probabilities_stores_each_verdicts_probabilities_and_the_lab_calibrates_on_them(
    reference, monkeypatch
):
    """The test server gives the verdict token "1" 0.7, "2" 0.2 and "0" 0.1: every verdict stores
    those, and the judge lab's calibration reads the judge's own probability (0.75 for the response
    shown first, a tie half) where a run of one sample had none to read before. Asked both ways round,
    its probability is the two orders' half each: a judge that always favours the response shown first
    says ½ of each pair."""
    from io import StringIO

    from django.core.management import CommandError, call_command

    from evalhub.judgelab.report import compute
    from evalhub.llm.testing import FakeLLMServer
    from evalhub.reads.judged_pairs import Scope

    with FakeLLMServer(reply=lambda messages: "The first is right.\n1", api_key="test-key") as server:
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        for extra in (["--probabilities"], []):
            out = StringIO()
            judge = "openai:gpt-4o-mini" if extra else "openai:gpt-4o"
            call_command("judge_pairs", "--run", str(reference.pk), "--judge", judge, *extra, stdout=out)
            assert ": Succeeded." in out.getvalue()
    given = JudgeVerdict.objects.filter(judge_run__judge="openai:gpt-4o-mini")
    assert given.count() == 6
    for verdict in given:
        assert verdict.probabilities == pytest.approx({"first": 0.7, "second": 0.2, "tie": 0.1})
    assert not JudgeVerdict.objects.filter(judge_run__judge="openai:gpt-4o", probabilities__isnull=False).exists()
    report = {judge.judge.id: judge for judge in compute(Scope()).judges}
    calibrated = report["openai:gpt-4o-mini"].calibration
    assert calibrated is not None and calibrated.n == 2, "the two decided pairs"
    confidences = {round(b["confidence"], 6) for b in calibrated.bins if b["n"]}
    assert confidences == {0.5}, "0.75 for the first shown, in either order"
    assert report["openai:gpt-4o"].calibration is None, "one sample, no probabilities: nothing to calibrate"
    with pytest.raises(CommandError, match="gives no token log-probabilities"):
        call_command("judge_pairs", "--run", str(reference.pk), "--judge", "heuristic", "--probabilities")


def test_a_yescieval_pairwise_rubric_judge_sends_the_packages_prompt_and_lands_on_the_board_and_in_the_lab(
    reference, agents
):
    import json

    from evalhub.core.yescieval import rubrics
    from evalhub.core.yescieval.papers import papers_of
    from evalhub.reads.battles import battle_judges, judge_battles
    from evalhub.reads.caching import fingerprint
    from evalhub.reads.judged_pairs import Scope, collect

    asked = []

    def rater(agent, messages):
        asked.append(messages)
        user = messages[-1]["content"]
        a = user.split("<scientific-synthesis-A>\n", 1)[1].split("\n</scientific-synthesis-A>", 1)[0]
        b = user.split("<scientific-synthesis-B>\n", 1)[1].split("\n</scientific-synthesis-B>", 1)[0]
        rated = (4, 2) if len(a) >= len(b) else (2, 4)  # the longer answer covers more methods
        sides = {f"Response{s}": {"rating": str(r), "rationale": "counted"} for s, r in zip("AB", rated, strict=True)}
        return f"```json\n{json.dumps({'MethodCoverage': sides})}\n```"

    agents(rater)
    run = judge(reference, scale="rubric", rubric="method_coverage", domain="nlp", check_position=True)
    run.job.refresh_from_db()
    assert run.job.status == JobStatus.SUCCEEDED and run.verdicts.count() == 6
    assert all(v.verdict in (1, 2) for v in run.verdicts.all())
    (report,), _, _ = meta_evaluation(reference)
    assert report.flips.hits == 0  # rated by content: the order shown changes nothing

    debate = reference.debates.order_by("id").first()
    first, second = debate.shown
    expected = rubrics.messages(
        "method_coverage",
        debate.prompt.text,
        (first.text, second.text),
        papers_of(debate.prompt.metadata or {}, debate.prompt.source),
        kind=rubrics.PAIRWISE,
        domain="nlp",
    )
    assert expected in asked  # the package's pairwise prompt, as it renders it

    key = "scripted-0 · yescieval:method_coverage"
    assert (key, key) in dict(battle_judges())["Single LLM judges"]
    assert len(judge_battles(key, fingerprint())) == 3  # every pair it judged is a battle of its own
    assert key in collect(Scope()).judges  # the judge lab measures it like any judge


def test_a_rubric_judge_run_names_a_known_pairwise_rubric_on_the_rubric_scale(reference):
    from evalhub.debates.config import JudgeRunConfig

    def errors(**fields):
        return JudgeRunConfig(reference=reference, judge="heuristic", **fields).errors()

    assert errors(scale="rubric", rubric="method_coverage", domain="ecology") == []
    assert any("Choose a YESciEval pairwise rubric: context_coverage" in e for e in errors(scale="rubric"))
    # Relevancy is one of the package's pointwise rubrics only.
    assert any("Choose a YESciEval pairwise rubric" in e for e in errors(scale="rubric", rubric="relevancy"))
    assert "A YESciEval rubric and domain go with the rubric scale." in errors(rubric="method_coverage")
    assert any("Unknown domain 'physics'" in e for e in errors(scale="rubric", rubric="novelty", domain="physics"))
    refused = errors(scale="rubric", rubric="method_coverage", instructions="Be strict.")
    assert any("takes no instructions" in e for e in refused)
