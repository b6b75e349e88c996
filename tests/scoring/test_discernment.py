"""DHP and YESciEval judge runs end to end, with judges served by a loopback OpenAI-compatible server."""

from __future__ import annotations

import json
import zlib

import pytest
from scipy import stats

from evalhub.catalog.models import Prompt, Response
from evalhub.core.dhp.discernment import discernment
from evalhub.jobs.models import JobStatus
from evalhub.jobs.runners import work_chunk
from evalhub.scoring.actions import do_create_discernment_run
from evalhub.scoring.discernment.config import DiscernmentConfig
from evalhub.scoring.discernment.results import score_rows
from evalhub.scoring.models import DiscernmentRun, JudgeScore
from evalhub.worklog.models import RowIssue

SUMMARIES = [
    f"However, the study of case {n} finds a clear effect. The team measured {n + 3} sites in the north. "
    f"Therefore the authors recommend more monitoring. Moreover, the data are released openly."
    for n in range(12)
]


def rated_text(messages) -> str:
    content = messages[0]["content"] if len(messages) == 1 else messages[1]["content"]
    if "<scientific-synthesis>" in content:  # YESciEval's package prompt
        return content.split("<scientific-synthesis>\n", 1)[1].split("\n</scientific-synthesis>", 1)[0]
    return content.split("Summary:\n\n", 1)[1].split("\n\nEvaluation Score", 1)[0]


def judge_reply(model: str, messages) -> str:
    text = rated_text(messages[:2] if messages[0]["role"] == "system" else messages[:1])
    original = text in SUMMARIES
    if model == "perfect":
        return "5" if original else "2"
    if model == "coin":
        return str(3 + zlib.crc32(text.encode()) % 2)
    if model == "chatty":
        return "4" if messages[-1]["content"].startswith("Answer with the score only") else "It reads well."
    if model == "broken":
        return "no idea"
    if model == "strict":
        rating = 5 if original else 1
        return f'```json\n{{"rating": {rating}, "rationale": "checked"}}\n```'
    if model == "optimist":
        return "{'rating': 5, 'rationale': 'Looks great!'} Anything else?"
    if model == "renamer":
        return messages[-1]["content"].split("Summary:\n\n")[1].split("\n\nRevised")[0].replace("north", "Zyntara")
    raise AssertionError(model)


def spec(server, model: str) -> str:
    return f"openai-compatible:{server.url}/v1|{model}"


def run_all(run) -> list[str]:
    return [work_chunk(pk) for pk in run.job.chunks.values_list("pk", flat=True)]


def dhp_run(summaries, judges, *, chunk_prompts=5, **overrides):
    benchmark, system = summaries
    fields = {
        "benchmark": benchmark,
        "family": "dhp",
        "task": "dhp-summarization",
        "targets": [system],
        "perturbations": [["random_deletions", "minor"], ["reordering", "major"]],
        "metrics": ["coherence", "fluency"],
        "judges": judges,
        "repeats": 2,
        "shape": "summeval",
        **overrides,
    }
    return do_create_discernment_run(DiscernmentConfig(**fields), chunk_prompts=chunk_prompts, enqueue=False)


def test_a_dhp_run_scores_everything_and_reports_discernment_as_scipy_computes_it(summaries, server):
    run = dhp_run(summaries, [spec(server, "perfect"), spec(server, "coin")])
    assert run_all(run) == ["recorded"] * 3
    run.job.refresh_from_db()
    assert run.job.status == JobStatus.SUCCEEDED
    assert run.job.progress_done == 12
    # 2 judges × (12 originals + 24 perturbed) × 2 metrics × 2 repeats
    assert JudgeScore.objects.filter(run=run).count() == 2 * 36 * 2 * 2
    report = run.job.result["dhp"]["judges"]
    perfect, coin = report[spec(server, "perfect")], report[spec(server, "coin")]
    assert perfect["summary"]["D_min"] > 1
    assert coin["summary"]["D_avg"] < perfect["summary"]["D_min"]

    # Independently: means over repeats from the stored rows, then scipy's one-sided Wilcoxon.
    rows = [r for r in score_rows(run) if r["judge"] == spec(server, "coin") and r["metric"] == "fluency"]
    deletion = [r for r in rows if r["perturbation"] == "random_deletions (minor)"]
    expected = (
        stats.wilcoxon(
            [r["original_score"] for r in deletion], [r["perturbed_score"] for r in deletion], alternative="greater"
        ).pvalue
        if any(r["original_score"] != r["perturbed_score"] for r in deletion)
        else 1.0
    )
    entry = coin["perturbations"]["random_deletions (minor)"]
    assert entry["p_by_metric"]["fluency"] == pytest.approx(expected)
    assert entry["level"] == "C"
    assert coin["perturbations"]["reordering (major)"]["level"] == "S"
    assert perfect["perturbations"]["reordering (major)"]["D"] == pytest.approx(
        discernment(perfect["perturbations"]["reordering (major)"]["p"])
    )


def test_an_unreadable_answer_is_re_asked_once_then_stored_as_invalid_and_left_out(summaries, server):
    run = dhp_run(summaries, [spec(server, "chatty"), spec(server, "broken")], perturbations=[["reordering", "major"]])
    run_all(run)
    chatty = JudgeScore.objects.filter(run=run, judge=spec(server, "chatty"))
    broken = JudgeScore.objects.filter(run=run, judge=spec(server, "broken"))
    assert chatty.count() == chatty.filter(valid=True, reasked=True, score=4).count() > 0
    assert broken.count() == broken.filter(valid=False, score__isnull=True, reasked=True).count() > 0
    run.job.refresh_from_db()
    assert run.job.result["quality"][spec(server, "broken")]["invalid"] == broken.count()
    assert spec(server, "broken") not in run.job.result["dhp"]["judges"], "no invalid answer became a score"


def test_running_a_chunk_again_calls_no_judge_and_writes_nothing(summaries, server):
    run = dhp_run(summaries, [spec(server, "perfect")])
    run_all(run)
    calls, scores = server.request_count, JudgeScore.objects.count()
    assert run_all(run) == ["done"] * 3
    assert (server.request_count, JudgeScore.objects.count()) == (calls, scores)


def test_perturbed_copies_are_seeded_and_reused_by_a_second_run(summaries, server):
    first = dhp_run(summaries, [spec(server, "perfect")], perturbations=[["random_typos", "major"]], seed=4)
    run_all(first)
    texts = dict(Response.objects.filter(perturbation="random_typos").values_list("parent_id", "text"))
    second = dhp_run(summaries, [spec(server, "coin")], perturbations=[["random_typos", "major"]], seed=4)
    run_all(second)
    assert dict(Response.objects.filter(perturbation="random_typos").values_list("parent_id", "text")) == texts
    assert all(text != SUMMARIES[0] for text in texts.values())


def test_an_llm_perturbation_uses_the_perturbation_llm_and_a_failure_is_reported(summaries, server):
    Response.objects.filter(text=SUMMARIES[0]).update(text="One sentence about nothing in particular.")
    run = dhp_run(
        summaries,
        [spec(server, "perfect")],
        perturbations=[["fictional_named_entities", "minor"]],
        perturbation_lm=spec(server, "renamer"),
    )
    run_all(run)
    made = Response.objects.filter(perturbation="fictional_named_entities")
    assert made.count() == 11
    assert all("Zyntara" in r.text for r in made)
    issue = RowIssue.objects.get(job=run.job, stage="perturbation")
    assert "unchanged" in issue.message


def test_expert_weights_change_the_weighted_discernment_only(summaries, server):
    weights = {
        "random_deletions": {"coherence": 0.9, "fluency": 0.1, "relevance": 0.0, "consistency": 0.0},
        "reordering": {"coherence": 0.5, "fluency": 0.5, "relevance": 0.0, "consistency": 0.0},
    }
    plain = dhp_run(summaries, [spec(server, "coin")])
    weighted = dhp_run(summaries, [spec(server, "coin")], weights=weights, weights_source="survey v1")
    run_all(plain)
    run_all(weighted)
    plain.job.refresh_from_db()
    weighted.job.refresh_from_db()
    a = plain.job.result["dhp"]["judges"][spec(server, "coin")]["perturbations"]["random_deletions (minor)"]
    b = weighted.job.result["dhp"]["judges"][spec(server, "coin")]["perturbations"]["random_deletions (minor)"]
    assert a["p"] == b["p"]
    assert a["p_by_metric"] == b["p_by_metric"]
    p = b["p_by_metric"]
    assert b["p_ew"] == pytest.approx(1 / (0.9 / p["coherence"] + 0.1 / p["fluency"]))
    assert weighted.job.result["weights_source"] == "survey v1"


def yescieval_run(summaries, server) -> DiscernmentRun:
    benchmark, system = summaries
    return do_create_discernment_run(
        DiscernmentConfig(
            benchmark=benchmark,
            family="yescieval",
            task="yescieval",
            targets=[system],
            perturbations=[
                ["cohesion_subtle", "subtle"],
                ["cohesion_extreme", "extreme"],
                ["readability_extreme", "extreme"],
            ],
            metrics=["cohesion", "readability"],
            judges=[spec(server, "strict"), spec(server, "optimist")],
            repeats=1,
        ),
        enqueue=False,
    )


def test_a_yescieval_run_reports_optimism_per_rubric(summaries, server):
    run = yescieval_run(summaries, server)
    run_all(run)
    run.job.refresh_from_db()
    # Originals on both rubrics; each adversarial copy only on the rubric its attack targets.
    per_judge = 12 * 2 + 12 * 3
    assert JudgeScore.objects.filter(run=run, judge=spec(server, "strict")).count() == per_judge
    assert not JudgeScore.objects.filter(run=run, response__perturbation="readability_extreme", metric="cohesion")
    optimism = run.job.result["optimism"]
    strict, optimist = optimism[spec(server, "strict")], optimism[spec(server, "optimist")]
    assert strict["cohesion"]["extreme"]["drop"] == 4
    assert strict["cohesion"]["extreme"]["optimistic_share"] == 0
    assert optimist["readability"]["extreme"]["retention"] == 1
    assert optimist["cohesion"]["subtle"]["p"] == 1
    assert strict["all"]["extreme"]["n"] == 24
    assert JudgeScore.objects.filter(run=run, judge=spec(server, "optimist"), rationale="Looks great!").exists()


def test_probability_mode_reads_the_digit_distribution_of_a_local_judge(summaries, tiny_model_dir):
    run = dhp_run(
        summaries,
        [f"transformers:{tiny_model_dir}"],
        mode="probability",
        perturbations=[["reordering", "major"]],
        metrics=["coherence"],
    )
    run_all(run)
    scores = JudgeScore.objects.filter(run=run)
    assert scores.count() == 24
    assert {s.repeat for s in scores} == {0}
    for score in scores:
        assert 1 <= score.score <= 5
        assert 0 < score.digit_mass <= 1
        probabilities = json.loads(score.raw.replace("'", '"'))
        expected = sum(int(k) * v for k, v in probabilities.items()) / sum(probabilities.values())
        assert score.score == pytest.approx(expected, rel=1e-4)


def test_bad_configurations_are_refused_with_every_reason(summaries, server):
    with pytest.raises(ValueError) as refused:
        dhp_run(
            summaries,
            ["heuristc", "openai:gpt-4o"],
            perturbations=[["grammatical_errors", "minor"], ["cohesion_subtle", "subtle"]],
            metrics=["coherence", "style"],
            mode="probability",
        )
    message = str(refused.value)
    for part in (
        "Did you mean 'heuristic'",
        "next-token probabilities need a local transformers model",
        "name the perturbation LLM",
        "belongs to yescieval",
        "not 'style'",
    ):
        assert part in message


def test_yescieval_judges_cannot_use_next_token_probabilities(summaries):
    benchmark, system = summaries
    with pytest.raises(ValueError, match="JSON: use generation"):
        do_create_discernment_run(
            DiscernmentConfig(
                benchmark=benchmark,
                family="yescieval",
                task="yescieval",
                targets=[system],
                perturbations=[["cohesion_subtle", "subtle"]],
                metrics=["cohesion"],
                judges=["transformers:/x"],
                mode="probability",
            ),
            enqueue=False,
        )


def test_a_target_variant_judges_only_those_responses_and_their_copies(summaries, server):
    from evalhub.catalog.models import Prompt, Response

    benchmark, system = summaries
    tiered = Response.objects.create(
        prompt=Prompt.objects.filter(benchmark=benchmark).first(),
        model=system,
        variant="answer:1h",
        text="The council approved the plan. Critics said the cost was too high. A vote follows in May.",
    )
    run = dhp_run(summaries, [spec(server, "perfect")], target_variant="answer:1h", repeats=1)
    assert run.job.progress_total == 1
    run_all(run)
    judged = set(JudgeScore.objects.filter(run=run).values_list("response__parent_id", "response_id"))
    assert {parent or response for parent, response in judged} == {tiered.pk}
    everything = dhp_run(summaries, [spec(server, "perfect")], repeats=1)
    assert everything.job.progress_total == Response.objects.filter(parent=None).count()


def test_a_jobs_exports_recompute_with_dhp_report_to_the_same_numbers_under_loose_weights(summaries, server):
    """Weights naming an unscored metric and summing to 0.999: the job and the command apply one rule."""
    import csv
    import io

    from evalhub.core.dhp.report import build_report, read_scores
    from evalhub.scoring.discernment.results import perturbation_key

    loose = {"random_deletions": {"coherence": 0.6, "fluency": 0.2, "relevance": 0.199}}
    run = dhp_run(summaries, [spec(server, "coin")], weights=loose, weights_source="test")
    run_all(run)
    job_report = run.job.__class__.objects.get(pk=run.job_id).result["dhp"]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(score_rows(run)[0]))
    writer.writeheader()
    writer.writerows(score_rows(run))
    keyed = {perturbation_key("random_deletions", "minor"): loose["random_deletions"]}
    command_report = build_report(read_scores(buffer.getvalue()), keyed)
    assert command_report["judges"] == job_report["judges"]
    assert "renormalised" in command_report["notes"]["weights_fitted"]["random_deletions (minor)"]


def test_each_judge_score_is_sent_as_an_evaluation_event_when_events_are_on(
    summaries, server, django_capture_on_commit_callbacks
):
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    from evalhub.system.telemetry import using_provider

    memory = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(memory))
    run = dhp_run(summaries, [spec(server, "perfect")], perturbations=[["reordering", "major"]], repeats=1)
    with using_provider(provider), django_capture_on_commit_callbacks(execute=True):
        run_all(run)
    sent = [dict(r.log_record.attributes) for r in memory.get_finished_logs()]
    assert len(sent) == JudgeScore.objects.filter(run=run).count() == 12 * 2 * 2
    perturbed = [a for a in sent if a["evalhub.perturbation"] != "original"]
    assert {a["gen_ai.evaluation.score.value"] for a in perturbed} == {2.0}
    assert {a["gen_ai.evaluation.name"] for a in sent} == {"dhp:coherence", "dhp:fluency"}
    sample = sent[0]
    assert sample["evalhub.evaluator.name"] == spec(server, "perfect")
    assert sample["evalhub.evaluator.version"] == "dhp-summarization:generate"
    assert sample["evalhub.benchmark"] == run.benchmark.slug and sample["gen_ai.response.id"].isdigit()


def test_the_configuration_is_stored_once_and_read_back_as_it_was_given(summaries):
    benchmark, system = summaries
    config = DiscernmentConfig(
        benchmark=benchmark,
        family="dhp",
        task="dhp-summarization",
        targets=[system],
        perturbations=[["random_deletions", "minor"], ["reordering", "major"]],
        metrics=["coherence", "fluency"],
        judges=["transformers:/models/judge"],
        mode="probability",
        repeats=4,
        weights={"random_deletions": {"coherence": 1.0}},
        weights_source="a survey",
    )
    run = do_create_discernment_run(config, enqueue=False)
    assert run.job.params == {}
    assert config.repeats == 1  # one forward pass reads the distribution: nothing to repeat
    assert DiscernmentConfig.of_run(DiscernmentRun.objects.get(pk=run.pk)) == config


def test_a_runs_results_read_its_responses_in_bounded_queries_and_come_out_the_same(summaries, server, monkeypatch):
    """The results read every scored response in one `IN` list: past SQLite's variable limit a finished
    run's report failed. With each bounded query naming at most two values, the rows and the summaries
    of a DHP and a YESciEval run are those read in one query."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evalhub.scoring.discernment.results import discernment_summary
    from evalhub.system import bounded_queries
    from tests.query_sizes import longest_in_list

    runs = [dhp_run(summaries, [spec(server, "perfect")]), yescieval_run(summaries, server)]
    for run in runs:
        run_all(run)
    whole = [(sorted(score_rows(run), key=repr), discernment_summary(run)) for run in runs]
    monkeypatch.setattr(bounded_queries, "PER_QUERY", 2)
    with CaptureQueriesContext(connection) as queries:
        parted = [(sorted(score_rows(run), key=repr), discernment_summary(run)) for run in runs]
    assert parted == whole
    assert longest_in_list(queries) <= 2


def test_a_yescieval_run_sends_each_judge_exactly_the_packages_messages_with_its_domain_and_papers(summaries, server):
    import importlib

    from evalhub.core.yescieval.rubrics import package

    benchmark, _system = summaries
    papers = [
        {"title": "Rivers", "abstract": "Rivers carry sediment."},
        {"title": "Deltas", "abstract": "Deltas grow."},
    ]
    Prompt.objects.filter(benchmark=benchmark).update(metadata={"papers": papers})
    run = do_create_discernment_run(
        DiscernmentConfig(
            benchmark=benchmark,
            family="yescieval",
            task="yescieval",
            targets=[_system],
            perturbations=[["relevancy_extreme", "extreme"]],
            metrics=["relevancy", "method_coverage"],  # one of the paper's nine, one of the package's later rubrics
            judges=[spec(server, "strict")],
            repeats=1,
            domain="ecology",
        ),
        enqueue=False,
    )
    run_all(run)
    assert JudgeScore.objects.filter(run=run, metric="method_coverage").count() == len(SUMMARIES)

    package()  # the package's own classes, built here as its README builds them
    injector = importlib.import_module("yescieval.injector")
    classes = {
        "Relevancy": importlib.import_module("yescieval.rubric.pointwise.structural.relevancy").Relevancy,
        "MethodCoverage": importlib.import_module("yescieval.rubric.pointwise.breadth").MethodCoverage,
    }
    sent = [request["body"]["messages"] for request in server.state.requests]
    for text in SUMMARIES:
        for model in classes.values():
            expected = model(
                question="Summarise.",
                answer=text,
                papers={"Rivers": "Rivers carry sediment.", "Deltas": "Deltas grow."},
                domain="ecology",
                vocabulary=injector.VocabularyInjector(),
                example=injector.ExampleInjector(),
            ).instruct()
            assert expected in sent, (model.__name__, text[:30])


def test_a_yescieval_run_takes_every_rubric_the_package_ships_and_refuses_an_unknown_domain(summaries, server):
    from evalhub.core.yescieval.rubrics import POINTWISE, rubrics

    benchmark, system = summaries
    fields = {
        "benchmark": benchmark,
        "family": "yescieval",
        "task": "yescieval",
        "targets": [system],
        "perturbations": [["relevancy_extreme", "extreme"]],
        "judges": ["heuristic"],
    }
    assert DiscernmentConfig(**fields, metrics=list(rubrics()[POINTWISE])).errors() == []
    refused = DiscernmentConfig(**fields, metrics=["relevancy", "vibes"], domain="physics").errors()
    assert any("Unknown rubrics vibes" in e and "method_coverage" in e for e in refused)
    assert any("Unknown domain 'physics'" in e and "ecology" in e for e in refused)
    dhp = {**fields, "family": "dhp", "task": "dhp-summarization", "perturbations": [["reordering", "major"]]}
    assert (
        "A domain's vocabulary is YESciEval's: DHP runs take none."
        in DiscernmentConfig(**dhp, metrics=["coherence"], domain="nlp").errors()
    )


def test_the_optimism_report_covers_the_packages_later_rubrics_and_finds_a_planted_optimist(summaries, server):
    benchmark, system = summaries
    run = do_create_discernment_run(
        DiscernmentConfig(
            benchmark=benchmark,
            family="yescieval",
            task="yescieval",
            targets=[system],
            perturbations=[["breadth_extreme", "extreme"], ["breadth_subtle", "subtle"]],
            metrics=["method_coverage", "scope_coverage"],
            judges=[spec(server, "strict"), spec(server, "optimist")],  # the optimist rates every copy 5
            repeats=1,
        ),
        enqueue=False,
    )
    run_all(run)
    run.job.refresh_from_db()
    optimism = run.job.result["optimism"]
    strict, optimist = optimism[spec(server, "strict")], optimism[spec(server, "optimist")]
    for rubric in ("method_coverage", "scope_coverage"):  # one breadth attack, rated on each breadth rubric
        assert strict[rubric]["extreme"]["drop"] == 4 and strict[rubric]["extreme"]["optimistic_share"] == 0
        assert optimist[rubric]["extreme"]["retention"] == 1 and optimist[rubric]["extreme"]["optimistic_share"] == 1
        assert optimist[rubric]["subtle"]["p"] == 1  # nothing noticed
        assert strict[rubric]["extreme"]["n"] == len(SUMMARIES)


def test_the_form_takes_a_rubric_familys_name_for_its_rubrics(summaries):
    from evalhub.scoring.forms import DiscernmentRunForm

    benchmark, system = summaries
    form = DiscernmentRunForm(
        {
            "benchmark": benchmark.pk,
            "family": "yescieval",
            "task": "yescieval",
            "targets": [system.pk],
            "perturbations": ["breadth_extreme:extreme"],
            "metrics": "breadth, relevancy",
            "judges": "heuristic",
            "repeats": 1,
            "mode": "generate",
            "temperature": 0,
            "shape": "default",
            "seed": 0,
            "domain": "ecology",
        }
    )
    assert form.is_valid(), form.errors
    config = form.config()
    assert list(config.metrics) == [
        "context_coverage",
        "dimension_coverage",
        "method_coverage",
        "scale_coverage",
        "scope_coverage",
        "relevancy",
    ]
    assert config.domain == "ecology"
