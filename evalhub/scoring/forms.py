from __future__ import annotations

from django import forms

from evalhub.catalog.models import Benchmark, LanguageModel, check_variant
from evalhub.catalog.queries import chosen_prompt_ids
from evalhub.core.gem.validation import STRATEGIES
from evalhub.scoring.discernment.config import DiscernmentConfig
from evalhub.scoring.gem.config import GemConfig
from evalhub.scoring.gem.planning import check_preprocessing
from evalhub.scoring.models import GemVariant
from evalhub.system.forms import OnlyChoicePreselectedForm, SpecField

VARIANT_HELP = '"imported" (the responses as imported) or a generation variant such as answer:0h; blank: all.'
SPEC_HELP = (
    "A provider spec: openai:gpt-4o, anthropic:…, openai-compatible:http://host:8000/v1|model, transformers:/path."
)


class GemRunForm(OnlyChoicePreselectedForm):
    benchmark = forms.ModelChoiceField(Benchmark.objects.all())
    candidates = forms.ModelMultipleChoiceField(
        LanguageModel.objects.all(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="The models whose responses are scored.",
    )
    references = forms.ModelMultipleChoiceField(
        LanguageModel.objects.all(),
        widget=forms.CheckboxSelectMultiple,
        help_text="Peer references (typically the human reviewers); they are also scored against each other, "
        "as the human baseline.",
    )
    variants = forms.MultipleChoiceField(
        choices=GemVariant.choices, initial=[GemVariant.RAW], widget=forms.CheckboxSelectMultiple
    )
    evaluation_lm = SpecField(
        max_length=500,
        label="Evaluation LM",
        help_text="Whose log-probabilities are used: transformers:/path/to/model (local weights) or "
        "openai-compatible:http://vllm:8000/v1|model (a vLLM server with prompt log-probabilities).",
    )
    dtype = forms.ChoiceField(
        choices=[("auto", "auto (bf16 on GPU, fp32 on CPU)"), ("bfloat16", "bfloat16"), ("float32", "float32")]
    )
    preprocessing_lm = SpecField(
        max_length=500,
        required=False,
        label="Preprocessing LM",
        help_text="Chat provider for the C.1 rewrite and the C.4 summary. " + SPEC_HELP,
    )
    use_imported_preprocessing = forms.BooleanField(
        required=False, initial=True, help_text="Use a response's imported metadata 'preprocessed' text when present."
    )
    validation_strategies = forms.MultipleChoiceField(
        choices=[(name, f"{s.label} ({s.kind}, GEM {s.section})") for name, s in STRATEGIES.items()],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Algorithm 1: each candidate response is also scored after this change.",
    )
    validation_lm = SpecField(
        max_length=500, required=False, label="Validation LM", help_text="For the LLM-made strategies. " + SPEC_HELP
    )
    examiner_lm = SpecField(
        max_length=500,
        required=False,
        label="LMExaminer LM",
        help_text="Adds the LMExaminer baseline (GEM D.1) to the validation table. " + SPEC_HELP,
    )
    candidate_variant = forms.CharField(
        required=False,
        max_length=100,
        label="Candidate responses",
        help_text="Which of the candidates' responses: " + VARIANT_HELP,
    )
    seed = forms.IntegerField(initial=0)
    bootstrap = forms.BooleanField(required=False, help_text="Percentile bootstrap intervals instead of ±1.645·SE.")

    def clean(self):
        data = super().clean() or {}
        if self.errors:
            return data
        for error in self.config().errors():
            self.add_error(None, error)
        problem = check_variant(data["benchmark"], data["candidates"], data["candidate_variant"].strip())
        if problem:
            self.add_error("candidate_variant", problem)
        models = {m.pk for m in data["candidates"]} | {m.pk for m in data["references"]}
        missing = check_preprocessing(
            chosen_prompt_ids(data["benchmark"]),
            models,
            data["variants"],
            data["preprocessing_lm"].strip(),
            data["use_imported_preprocessing"],
        )
        if missing:
            self.add_error("variants", missing)
        return data

    def config(self) -> GemConfig:
        data = self.cleaned_data
        return GemConfig(
            benchmark=data["benchmark"],
            candidates=tuple(data["candidates"]),
            references=tuple(data["references"]),
            variants=tuple(data["variants"]),
            evaluation_lm=data["evaluation_lm"].strip(),
            dtype=data["dtype"],
            preprocessing_lm=data["preprocessing_lm"].strip(),
            use_imported_preprocessing=data["use_imported_preprocessing"],
            validation_strategies=tuple(data["validation_strategies"]),
            validation_lm=data["validation_lm"].strip(),
            examiner_lm=data["examiner_lm"].strip(),
            candidate_variant=data["candidate_variant"].strip(),
            seed=data["seed"],
            bootstrap=data["bootstrap"],
        )


def perturbation_choices() -> list[tuple[str, str]]:
    from evalhub.core.dhp.perturbations import REGISTRY

    def label(p, severity: str) -> str:
        said = p.label.endswith(f"({severity})")  # YESciEval's variants name their severity already
        family = p.family.upper() if p.family == "dhp" else "YESciEval"
        return f"{family} · {p.level} · {p.label}{'' if said else f' ({severity})'}{' · LLM' if p.llm else ''}"

    return [(f"{name}:{severity}", label(p, severity)) for name, p in REGISTRY.items() for severity in p.severities]


def yescieval_domain_choices() -> list[tuple[str, str]]:
    from evalhub.core.yescieval.rubrics import domains

    return [("", "None"), *domains().items()]


class DiscernmentRunForm(OnlyChoicePreselectedForm):
    benchmark = forms.ModelChoiceField(Benchmark.objects.all())
    family = forms.ChoiceField(choices=[("dhp", "DHP discernment"), ("yescieval", "YESciEval optimism bias")])
    task = forms.ChoiceField(
        choices=[
            ("dhp-summarization", "DHP: summarization"),
            ("dhp-story-completion", "DHP: story completion"),
            ("dhp-question-answering", "DHP: question answering"),
            ("dhp-translation", "DHP: translation"),
            ("yescieval", "YESciEval: science Q&A synthesis"),
        ]
    )
    targets = forms.ModelMultipleChoiceField(
        LanguageModel.objects.all(), widget=forms.CheckboxSelectMultiple, help_text="Whose responses are perturbed."
    )
    perturbations = forms.MultipleChoiceField(choices=perturbation_choices, widget=forms.CheckboxSelectMultiple)
    metrics = forms.CharField(
        required=False,
        help_text="Comma-separated metric or rubric keys (YESciEval: a family's name, e.g. breadth, stands for its "
        "rubrics); empty means all of the task's (YESciEval: the paper's nine).",
    )
    judges = SpecField(
        per_line=True,
        widget=forms.Textarea(attrs={"rows": 3}),
        initial="heuristic",  # offline, so a first run works with no key and no model
        help_text="One provider spec per line (heuristic: the offline judge, not a language model).",
    )
    repeats = forms.IntegerField(min_value=1, max_value=20, initial=5, help_text="k generations averaged (DHP: 5).")
    mode = forms.ChoiceField(
        choices=[("generate", "Generate k times and average"), ("probability", "Expected score from '1'..'5' (local)")]
    )
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0)
    shape = forms.ChoiceField(
        choices=[(s, s) for s in ("default", "summeval", "sumpubmed", "story", "qa", "translation")],
        help_text="Dataset shape for the paper's k (DHP Table 2).",
    )
    perturbation_lm = SpecField(max_length=500, required=False, help_text="For LLM-made perturbations.")
    survey_version: forms.ModelChoiceField = forms.ModelChoiceField(
        queryset=None, required=False, help_text="Expert weights from this survey's answers; none: uniform."
    )
    target_variant = forms.CharField(
        required=False,
        max_length=100,
        label="Target responses",
        help_text="Which of the target models' responses are judged: " + VARIANT_HELP,
    )
    seed = forms.IntegerField(initial=0)
    domain = forms.ChoiceField(
        choices=yescieval_domain_choices,
        required=False,
        help_text="YESciEval: inject a domain's vocabulary and worked examples into the rubrics' prompts.",
    )

    def __init__(self, *args, **kwargs):
        from evalhub.surveys.models import SurveyVersion

        super().__init__(*args, **kwargs)
        surveys = self.fields["survey_version"]
        assert isinstance(surveys, forms.ModelChoiceField)
        surveys.queryset = SurveyVersion.objects.filter(published=True).select_related("survey")

    def clean(self):
        from evalhub.core.prompts.surveys import DHP_TEMPLATES
        from evalhub.core.yescieval.rubrics import PAPER_RUBRICS, expand

        data = super().clean() or {}
        if self.errors:
            return data
        family, task = data["family"], data["task"]
        if (family == "yescieval") != (task == "yescieval"):
            self.add_error("task", "YESciEval runs use the YESciEval task; DHP runs one of the DHP tasks.")
            return data
        metrics = [m.strip() for m in data["metrics"].split(",") if m.strip()]
        if not metrics:
            metrics = (
                list(PAPER_RUBRICS) if family == "yescieval" else [m["key"] for m in DHP_TEMPLATES[task]["metrics"]]
            )
        data["metric_list"] = expand(metrics) if family == "yescieval" else metrics
        data["judge_list"] = [line.strip() for line in data["judges"].splitlines() if line.strip()]
        data["perturbation_list"] = [choice.split(":", 1) for choice in data["perturbations"]]
        for error in self.config().errors():
            self.add_error(None, error)
        problem = check_variant(data["benchmark"], data["targets"], data["target_variant"].strip())
        if problem:
            self.add_error("target_variant", problem)
        return data

    def config(self) -> DiscernmentConfig:
        from evalhub.surveys.actions import version_weights

        data = self.cleaned_data
        weights, source = None, ""
        if data["survey_version"]:
            version = data["survey_version"]
            expert, respondents = version_weights(version)
            weights = expert.weights
            source = f"{version.survey.title} v{version.number} ({respondents} experts)"
        return DiscernmentConfig(
            benchmark=data["benchmark"],
            family=data["family"],
            task=data["task"],
            targets=tuple(data["targets"]),
            perturbations=data["perturbation_list"],
            metrics=data["metric_list"],
            judges=data["judge_list"],
            repeats=data["repeats"],
            mode=data["mode"],
            temperature=data["temperature"],
            shape=data["shape"],
            perturbation_lm=data["perturbation_lm"].strip(),
            weights=weights,
            weights_source=source,
            target_variant=data["target_variant"].strip(),
            seed=data["seed"],
            domain=data.get("domain") or "",
        )
