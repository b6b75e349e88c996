"""The judge lab's report is kept: a page request never computes one once its scope has one; after
new labels it shows the last one, saying so, while one refresh runs on a worker; exports wait for
the current one; a snapshot is read into the report's own types, never unpickled."""

from __future__ import annotations

import pickle
from dataclasses import make_dataclass

import pytest
from django.core.cache import cache

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.core.judge_lab.report import build_report
from evalhub.core.judge_lab.snapshots import SCHEMA_VERSION, decode_report, encode_report, schema_version
from evalhub.core.statistics.estimators import AUTO, Correction, choices
from evalhub.judgelab import report as judge_report
from evalhub.judgelab.models import ReportSnapshot
from tests.core.judge_lab.test_measures import planted

pytestmark = pytest.mark.django_db

LABELS = (
    "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner\r\n"
    "q1,Is 221 prime?,gpt-4o,llama-3,No: 13 x 17.,Yes.,human-ana,a\r\n"
    "q1,,gpt-4o,llama-3,No: 13 x 17.,Yes.,gpt-4o,a\r\n"
    "q2,Name a prime above 100.,gpt-4o,llama-3,101,100,human-ana,a\r\n"
    "q2,,gpt-4o,llama-3,101,100,gpt-4o,b\r\n"
)
MORE = "q2,,gpt-4o,llama-3,101,100,claude,a\r\n"


def imported(text: str) -> None:
    do_import_judgments(filename="l.csv", data=text.encode(), benchmark_slug="primes", allow_new_models=True)


@pytest.fixture
def counted(monkeypatch):
    """How often a report is computed; `refreshes` lists the refreshes asked of a worker (not run)."""
    calls = {"compute": 0, "refreshes": [], "boards": []}
    real = judge_report.compute

    def counting(scope, *rest):
        calls["compute"] += 1
        return real(scope, *rest)

    class Task:
        def apply_async(self, args=(), kwargs=None):
            scope = judge_report.Scope(**kwargs["scope"])  # the scope the worker gets
            if "estimator" in kwargs:
                calls["boards"].append((scope, kwargs["estimator"]))
            else:
                calls["refreshes"].append(scope)

    monkeypatch.setattr(judge_report, "compute", counting)
    monkeypatch.setattr(judge_report, "task_named", lambda name: Task())
    return calls


def judges_on(page) -> set[str]:
    return {r.judge.id for _, r in page.context["judges"]}


def test_an_emptied_cache_is_served_from_the_snapshot_without_computing(login, viewer, client, counted):
    imported(LABELS)
    login(viewer)
    assert client.get("/judges/").status_code == 200
    assert counted["compute"] == 1 and ReportSnapshot.objects.count() == 1
    cache.clear()  # the counts' version goes with it: the kept report can no longer be known current
    page = client.get("/judges/")
    assert counted["compute"] == 1, "the kept report, not a new computation"
    assert judges_on(page) == {"gpt-4o", "human-ana"}
    assert counted["refreshes"] == [judge_report.Scope()], "and a worker asked to make sure"
    judge_report.refresh_report(judge_report.Scope())
    assert client.get("/judges/").context["freshness"].current


def test_with_many_judgments_a_scopes_first_report_is_a_workers_and_the_page_says_so(
    login, viewer, client, counted, monkeypatch
):
    """At ten million judgments the first report took 200 s inside the request."""
    imported(LABELS)
    monkeypatch.setattr(judge_report, "FIRST_REPORT_IN_WORKER_AT", 4)  # the four judgments above
    login(viewer)
    page = client.get("/judges/")
    assert page.status_code == 200 and counted["compute"] == 0, "not computed in the request"
    assert "No report of this scope has been computed yet" in page.content.decode()
    assert counted["refreshes"] == [judge_report.Scope()], "a worker is asked for it"
    judge_page = client.get(f"/judges/{judge_report.judge_key('gpt-4o')}/")
    assert judge_page.status_code == 200, "a judge's page says the report is being computed, not 'not found'"
    assert "No report of this scope has been computed yet" in judge_page.content.decode()
    judge_report.refresh_report(judge_report.Scope())  # the worker's turn
    page = client.get("/judges/")
    assert judges_on(page) == {"gpt-4o", "human-ana"} and page.context["freshness"].current
    assert counted["compute"] == 1


def test_with_few_judgments_a_scopes_first_report_is_computed_in_the_request(
    login, viewer, client, counted, monkeypatch
):
    imported(LABELS)
    monkeypatch.setattr(judge_report, "FIRST_REPORT_IN_WORKER_AT", 5)
    page = login(viewer).get("/judges/")
    assert judges_on(page) == {"gpt-4o", "human-ana"} and counted == {"compute": 1, "refreshes": [], "boards": []}


def test_after_new_labels_the_last_report_is_shown_as_earlier_and_one_refresh_is_asked(
    login, viewer, client, counted, monkeypatch
):
    imported(LABELS)
    login(viewer)
    before = judges_on(client.get("/judges/"))
    imported(LABELS + MORE)  # a new judge's label lands
    decoded = []
    real_decode = judge_report.decode_report
    monkeypatch.setattr(judge_report, "decode_report", lambda payload: decoded.append(1) or real_decode(payload))
    page = client.get("/judges/")
    assert len(decoded) == 1, "the kept report is read once a request"
    assert judges_on(page) == before, "the last report, at once"
    assert not page.context["freshness"].current
    assert "before the latest labels landed" in page.content.decode()
    client.get("/judges/")
    in_flight = [judge_report.Scope()]
    assert counted == {"compute": 1, "refreshes": in_flight, "boards": []}, (
        "one refresh in flight, none computed in a request"
    )

    judge_report.refresh_report(judge_report.Scope())  # the worker's part
    page = client.get("/judges/")
    assert "claude" in judges_on(page) and page.context["freshness"].current
    assert counted["compute"] == 2


def test_an_earlier_report_says_which_imports_landed_since_and_whether_any_was_into_its_benchmark(
    login, viewer, client, counted
):
    """The judge lab said only "before the latest labels landed", for minutes, whatever landed where."""
    imported(LABELS)
    login(viewer)
    client.get("/judges/?benchmark=primes")
    do_import_judgments(filename="other.csv", data=LABELS.encode(), benchmark_slug="other", allow_new_models=True)
    page = client.get("/judges/?benchmark=primes").content.decode()
    assert "(1 import since, into other; the latest, other.csv, 0" in page
    assert "none into primes, which this page shows)" in page
    imported(LABELS + MORE)
    page = client.get("/judges/?benchmark=primes").content.decode()
    assert "(2 imports since, into other, primes; the latest, l.csv," in page
    assert "none into primes" not in page


def test_an_export_waits_for_the_report_of_the_data_as_it_is(login, viewer, client, counted):
    imported(LABELS)
    login(viewer)
    client.get("/judges/")
    imported(LABELS + MORE)
    exported = client.get("/judges/report.json").json()
    assert "claude" in {judge["id"] for judge in exported["judges"]}
    assert counted["refreshes"] == []


def test_a_snapshot_that_is_not_a_report_of_this_schema_is_computed_again(login, viewer, client, counted):
    """Snapshots are MessagePack of the report's own types, read into those types (no pickle: reading one
    runs no code): bytes that are not such a report, or a report of another schema, are computed again."""
    imported(LABELS)
    login(viewer)
    client.get("/judges/")
    stored = bytes(ReportSnapshot.objects.get().payload)
    assert decode_report(stored) is not None
    for payload in (
        pickle.dumps({"judges": []}),
        b"not what was written",
        stored.replace(SCHEMA_VERSION.encode(), b"0" * 16),
    ):
        ReportSnapshot.objects.update(payload=payload)
        cache.clear()
        before = counted["compute"]
        assert client.get("/judges/").status_code == 200
        assert counted["compute"] == before + 1


def test_a_report_round_trips_through_its_snapshot_equal_to_itself():
    judges, labels, pairs, settled = planted()
    report = build_report(judges, labels, pairs, settled, resamples=50)
    assert decode_report(encode_report(report)) == report


def test_the_schema_version_changes_when_a_type_inside_the_report_does():
    """A field added two levels down changes the version, so a report kept before it is computed again."""
    inner = make_dataclass("Inner", [("value", float)])
    wider_inner = make_dataclass("Inner", [("value", float), ("low", float | None, None)])
    outer = make_dataclass("Outer", [("rows", list[inner])])
    wider_outer = make_dataclass("Outer", [("rows", list[wider_inner])])
    assert schema_version(outer) != schema_version(wider_outer)
    assert schema_version(outer) == schema_version(make_dataclass("Outer", [("rows", list[inner])]))


def test_a_refresh_asked_for_twice_computes_once(counted):
    imported(LABELS)
    judge_report.judge_lab_report()
    judge_report.refresh_report(judge_report.Scope())
    assert counted["compute"] == 1, "the kept report is current: nothing to do"


def test_a_broker_that_does_not_answer_leaves_the_kept_report_shown_and_says_no_worker_was_asked(
    login, viewer, client, counted, monkeypatch
):
    imported(LABELS)
    login(viewer)
    client.get("/judges/")
    imported(LABELS + MORE)

    class Down:
        def apply_async(self, args=(), kwargs=None):
            raise ConnectionError("broker down")

    monkeypatch.setattr(judge_report, "task_named", lambda name: Down())
    page = client.get("/judges/")
    assert page.status_code == 200 and "claude" not in judges_on(page)
    assert not page.context["freshness"].refreshing
    assert "no worker could be asked" in page.content.decode()
    monkeypatch.setattr(
        judge_report, "task_named", lambda name: type("Up", (), {"apply_async": lambda self, **sent: None})()
    )
    assert client.get("/judges/").context["freshness"].refreshing, "the next request asks again"


def test_a_judge_page_served_from_an_earlier_report_says_so_and_a_judge_not_in_it_yet_says_why(
    login, viewer, client, counted
):
    from evalhub.judgelab.report import judge_key

    imported(LABELS)
    login(viewer)
    client.get("/judges/")
    imported(LABELS + MORE)  # a new judge's label lands; the kept report predates it
    page = client.get(f"/judges/{judge_key('gpt-4o')}/").content.decode()
    assert "before the latest labels landed" in page and "appears when the report is" in page
    missing = client.get(f"/judges/{judge_key('claude')}/")
    assert missing.status_code == 404 and "A worker is computing the report" in missing.content.decode()


def test_a_workers_refresh_computes_on_one_blas_thread(monkeypatch):
    """A library's pool of a thread per core cost a refresh 40 % more CPU for the same time, beside a
    worker's other tasks; whatever the process's setting, the refresh runs on one thread."""
    from threadpoolctl import threadpool_info, threadpool_limits

    imported(LABELS)
    seen = []
    real = judge_report.compute

    def noting(scope):
        seen.extend(pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas")
        return real(scope)

    monkeypatch.setattr(judge_report, "compute", noting)
    with threadpool_limits(limits=2, user_api="blas"):
        judge_report.refresh_report(judge_report.Scope())
    assert seen and set(seen) == {1}


def test_choosing_another_estimator_computes_its_boards_apart_and_never_the_report(login, viewer, client, counted):
    """Issue 79, then 82: the estimator was part of the report's key, so choosing one computed the whole
    report in the request (about 45 s at ten million judgments), then a worker computed every measure
    again for it. The report is its scope's alone; another estimator's boards are computed apart."""
    imported(LABELS)
    login(viewer)
    client.get("/judges/")
    assert counted["compute"] == 1
    kept = ReportSnapshot.objects.get()
    other = next(name for name, _ in choices() if name != AUTO)
    page = client.get("/judges/", {"estimator": other})
    assert counted["compute"] == 1, "no report computed in the request"
    assert counted["boards"] == [(judge_report.Scope(), other)] and counted["refreshes"] == []
    freshness = page.context["freshness"]
    assert freshness.estimator_pending == other and freshness.estimator_asked
    assert freshness.current and not freshness.refreshing, "the report shown is current; only the other one waits"
    assert "are being computed by a worker" in page.content.decode()
    judge_report.refresh_corrected_boards(judge_report.Scope(), Correction(other))  # the worker's part
    assert counted["compute"] == 1, "the boards' worker computes no report"
    page = client.get("/judges/", {"estimator": other})
    assert not page.context["freshness"].estimator_pending and page.context["freshness"].current
    assert "are being computed by a worker" not in page.content.decode()
    assert ReportSnapshot.objects.get(pk=kept.pk).computed_at == kept.computed_at, "the report kept as it was"
    assert ReportSnapshot.objects.count() == 2  # the report, and the boards by the other estimator apart
    # The boards shown are those of the whole report computed by that estimator: one answer either way.
    shown = {r.judge.id: r.corrected for _, r in page.context["judges"]}
    whole = {r.judge.id: r.corrected for r in judge_report.compute(judge_report.Scope(), Correction(other)).judges}
    assert shown == whole
    assert any(board is not None for board in shown.values())


def test_a_refresh_after_another_judges_label_fits_only_the_boards_whose_inputs_moved(monkeypatch):
    """Heavy fits are kept by the digest of their inputs (issue 79): the corrected boards of judges whose
    battles, shares and people's labels are as they were come from the kept report, the rest are fitted,
    and the report is the one computed from scratch."""
    from evalhub.core.judge_lab import report as core_report
    from evalhub.reads.judged_pairs import collect

    imported(LABELS)
    judge_report.refresh_report(judge_report.Scope())
    fitted, fit = [], core_report.corrected_board

    def counted(judge, *args, **kwargs):
        fitted.append(judge.name)
        return fit(judge, *args, **kwargs)

    monkeypatch.setattr(core_report, "corrected_board", counted)
    imported(LABELS + MORE)  # claude's first label: gpt-4o's battles and people's labels are as they were
    judge_report.refresh_report(judge_report.Scope())
    assert fitted == ["claude"]
    kept = judge_report.judge_lab_report()
    found = collect(judge_report.Scope())
    fresh = build_report(list(found.judges.values()), found.labels, found.pairs, found.settled)
    assert {r.judge.id: r.corrected for r in kept.judges} == {r.judge.id: r.corrected for r in fresh.judges}
    assert any(r.judge.name == "gpt-4o" and r.corrected_inputs for r in kept.judges)


def test_at_scale_an_export_of_data_newer_than_the_kept_report_answers_503_while_a_worker_computes_it(
    login, viewer, client, counted, monkeypatch, caplog
):
    """At ten million judgments the judge report's CSV computed the report in the request: 178 s."""
    import logging

    from evalhub.core.statistics.estimators import PPI

    imported(LABELS)
    login(viewer)
    client.get("/judges/")  # a few judgments: computed in the request, and kept
    monkeypatch.setattr(judge_report, "FIRST_REPORT_IN_WORKER_AT", 4)  # as if this were ten million
    imported(LABELS + MORE)
    exports = ("/judges/report.csv", "/judges/report.json", f"/judges/{judge_report.judge_key('gpt-4o')}.json")
    for url in (*exports, "/judges/corrected-boards.csv"):
        with caplog.at_level(logging.INFO):
            waiting = client.get(url)
        assert waiting.status_code == 503 and waiting["Retry-After"] == "30", url
        assert "A worker is computing the judge lab's report" in waiting.content.decode()
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], "a wait the client is told of is no error"
    assert counted["compute"] == 1 and counted["refreshes"] == [judge_report.Scope()], "asked of a worker, once"
    judge_report.refresh_report(judge_report.Scope())  # the worker's turn
    assert "claude" in {judge["id"] for judge in client.get("/judges/report.json").json()["judges"]}
    waiting = client.get("/judges/report.json", {"estimator": PPI})  # another estimator's boards: a worker's too
    assert waiting.status_code == 503 and counted["boards"] == [(judge_report.Scope(), PPI)]
