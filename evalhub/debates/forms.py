from __future__ import annotations

from django import forms
from django.db.models import Exists, OuterRef

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, Response
from evalhub.core.scaleeval.aids import AID_NAMES, AIDS
from evalhub.core.scaleeval.debate import ALL_ROUNDS, LAST_ROUND, MAJORITY, UNANIMOUS
from evalhub.debates.config import probabilities_error
from evalhub.debates.models import BLIND_FIRST, FLOWS, RUBRIC, JudgeRun
from evalhub.llm.capabilities import is_reasoning_spec
from evalhub.llm.model_names import NOT_REASONING_NAME, REASONING_NAME
from evalhub.llm.registry import parse_spec
from evalhub.llm.types import UnknownProvider
from evalhub.system.forms import OnlyChoicePreselectedForm, SpecField

PRIVILEGED_CHOICES = [("reference_answer", "Reference answer"), ("rating_guidelines", "Rating guidelines")]
DEFAULT_AGENTS = "heuristic\nheuristic:reference\nheuristic:detail"


NO_TEMPERATURE_HELP = (
    "Not sent to reasoning models (OpenAI's o-series and GPT-5 onwards, or a spec with ?reasoning=true): they take "
    "only their own default."
)
MAX_TOKENS_HELP = "A reasoning model's count includes its reasoning: give it room."
# The page's script makes the field read-only where every spec named is a reasoning model's (static/js/specs.js).
TEMPERATURE_WIDGET = forms.NumberInput(
    attrs={
        "data-ignored-by-reasoning": REASONING_NAME.pattern,  # the same expressions in JavaScript's syntax
        "data-not-reasoning": NOT_REASONING_NAME.pattern,
    }
)


def response_authors():
    """The models (and people) that wrote a benchmark response: what a debate can compare."""
    written = Response.objects.filter(model=OuterRef("pk"), parent__isnull=True)
    return LanguageModel.objects.filter(Exists(written))


class DebateRunForm(OnlyChoicePreselectedForm):
    name = forms.CharField(max_length=200)
    benchmark = forms.ModelChoiceField(Benchmark.objects.all())
    criterion = forms.ModelChoiceField(Criterion.objects.all())
    # Only what wrote responses: voters, people and scorers an import named are judges, with nothing to debate.
    model_a = forms.ModelChoiceField(response_authors(), label="Model A")
    model_b = forms.ModelChoiceField(response_authors(), label="Model B")
    category = forms.CharField(max_length=100, required=False, help_text="Only prompts of this category.")
    variant = forms.CharField(
        max_length=100,
        required=False,
        label="Response variant",
        help_text="Blank: imported responses. A generation run's variant (e.g. answer:1h) compares its responses "
        "at one hint tier.",
    )
    agents = SpecField(
        per_line=True,
        widget=forms.Textarea(attrs={"rows": 4, "data-specs": "agents"}),
        initial=DEFAULT_AGENTS,
        help_text="One provider spec per line, e.g. openai:gpt-4o-mini, anthropic:claude-3-5-sonnet-latest, "
        "openai-compatible:http://host:8000/v1|model, transformers:/path, heuristic[:reference|detail|concise].",
    )
    rounds = forms.IntegerField(min_value=1, max_value=10, initial=3, help_text="One independent round + discussions.")
    consensus_rule = forms.ChoiceField(choices=[(UNANIMOUS, "Unanimous"), (MAJORITY, "Majority")])
    history = forms.ChoiceField(choices=[(ALL_ROUNDS, "All previous rounds"), (LAST_ROUND, "Only the last round")])
    privileged_sources = forms.MultipleChoiceField(
        choices=PRIVILEGED_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Shown to agents in their own marked section; never to the candidates.",
    )
    other_privileged = forms.CharField(
        required=False, max_length=300, help_text="Other privileged field names to show, comma-separated."
    )
    temperature = forms.FloatField(
        min_value=0, max_value=2, initial=0, help_text=NO_TEMPERATURE_HELP, widget=TEMPERATURE_WIDGET
    )
    max_tokens = forms.IntegerField(min_value=16, max_value=8192, initial=512, help_text=MAX_TOKENS_HELP)
    seed = forms.IntegerField(initial=0)
    human_verdicts = forms.IntegerField(
        min_value=1, max_value=9, initial=1, help_text="Independent human verdicts per unresolved debate."
    )
    tie_policy = forms.ChoiceField(
        choices=[("another", "Ask one more person"), ("admin", "Send to an admin")],
        help_text="When the people disagree without a majority.",
    )
    adjudication_flow = forms.ChoiceField(
        choices=FLOWS,
        initial=BLIND_FIRST,
        required=False,  # a form that does not say (a script's post) gets the default
        help_text="Blind first: people decide before they see any aid, then keep or change their verdict, "
        "so the aid's pull on them is measured (and the agents are not scored against verdicts they wrote).",
    )
    aids = forms.MultipleChoiceField(
        choices=[(aid, AID_NAMES[aid]) for aid in AIDS],
        initial=list(AIDS),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Blind first: each item is assigned one of these at random, balanced per person.",
    )
    start = forms.BooleanField(required=False, initial=True, label="Start now")

    def clean_agents(self) -> list[str]:
        specs = [line.strip() for line in self.cleaned_data["agents"].splitlines() if line.strip()]
        if not specs:
            raise forms.ValidationError("Name at least one agent.")
        for spec in specs:
            try:
                parse_spec(spec)
            except UnknownProvider as error:
                raise forms.ValidationError(str(error)) from None
        return specs

    def clean(self):
        data = super().clean() or {}
        if data.get("model_a") and data.get("model_a") == data.get("model_b"):
            self.add_error("model_b", "Model B must differ from model A.")
        data["adjudication_flow"] = data.get("adjudication_flow") or BLIND_FIRST
        if data["adjudication_flow"] == BLIND_FIRST and not data.get("aids"):
            self.add_error("aids", "Choose at least one aid (no aid, the control, is one).")
        others = [name.strip() for name in data.get("other_privileged", "").split(",") if name.strip()]
        data["privileged_sources"] = [*data.get("privileged_sources", []), *others]
        return data

    def run_fields(self) -> dict:
        data = self.cleaned_data
        names = (
            "name",
            "benchmark",
            "criterion",
            "model_a",
            "model_b",
            "category",
            "variant",
            "agents",
            "rounds",
            "consensus_rule",
            "history",
            "privileged_sources",
            "temperature",
            "max_tokens",
            "seed",
            "human_verdicts",
            "tie_policy",
            "adjudication_flow",
            "aids",
        )
        return {name: data[name] for name in names}


def pairwise_rubrics() -> dict:
    from evalhub.core.yescieval.rubrics import PAIRWISE, rubrics

    return rubrics()[PAIRWISE]


def domains() -> dict[str, str]:
    from evalhub.core.yescieval.rubrics import domains as shipped

    return shipped()


class JudgeRunForm(OnlyChoicePreselectedForm):
    judge = SpecField(
        max_length=300,
        initial="heuristic",
        help_text="Provider spec of the single judge (e.g. openai:gpt-5-mini?reasoning_effort=low).",
        widget=forms.TextInput(attrs={"data-specs": "judge"}),
    )
    criteria_variant = forms.ChoiceField(
        choices=[(v, v.capitalize()) for v in ("original", "shortened", "gibberish", "shuffled", "flipped", "masked")],
        help_text="ScaleEval Table 5: how robust is the judge to a reworded criterion?",
    )
    privileged_sources = forms.MultipleChoiceField(
        choices=PRIVILEGED_CHOICES, required=False, widget=forms.CheckboxSelectMultiple
    )
    scale = forms.ChoiceField(
        choices=JudgeRun.SCALES,
        initial="choice",
        required=False,  # left out (older scripts, the anchor comparison): ScaleEval's choice
        help_text="Graded answers are also correlated with people's graded ratings of the same pairs.",
    )
    rubric = forms.ChoiceField(
        choices=lambda: [("", "—"), *((key, r.title) for key, r in pairwise_rubrics().items())],
        required=False,
        label="YESciEval pairwise rubric",
        help_text="With the rubric scale: the yescieval package's prompt rates each answer 1–5; the higher wins.",
    )
    domain = forms.ChoiceField(
        choices=lambda: [("", "None"), *domains().items()],
        required=False,
        label="YESciEval domain",
        help_text="With a rubric: inject the domain's vocabulary and worked examples, as the package does.",
    )
    samples = forms.IntegerField(min_value=1, max_value=15, initial=1, help_text="k > 1: self-consistency by majority.")
    check_position = forms.BooleanField(required=False, initial=True, label="Also judge each pair in reverse order")
    temperature = forms.FloatField(
        min_value=0, max_value=2, initial=0, help_text=NO_TEMPERATURE_HELP, widget=TEMPERATURE_WIDGET
    )
    max_tokens = forms.IntegerField(min_value=16, max_value=8192, initial=512, help_text=MAX_TOKENS_HELP)
    seed = forms.IntegerField(initial=0)
    probabilities = forms.BooleanField(
        required=False,
        label="Read the judge's probability of each verdict",
        help_text="From its token log-probabilities (OpenAI chat models, OpenAI-compatible servers such as vLLM, "
        "in-process transformers models): "
        "the judge lab's calibration and the corrected boards then use them instead of vote shares over samples.",
    )

    def clean_judge(self) -> str:
        try:
            return str(parse_spec(self.cleaned_data["judge"].strip()))
        except UnknownProvider as error:
            raise forms.ValidationError(str(error)) from None

    def clean_scale(self) -> str:
        return self.cleaned_data.get("scale") or "choice"

    def clean(self):
        data = super().clean() or {}
        # A reasoning model is sent no temperature: it samples at its own default, so k samples differ.
        reasoning = is_reasoning_spec(data.get("judge", ""))
        if data.get("samples", 1) > 1 and data.get("temperature", 0) == 0 and not reasoning:
            self.add_error("temperature", "Several samples need a temperature above 0 to differ.")
        if data.get("scale") == RUBRIC and not data.get("rubric"):
            self.add_error("rubric", "Choose the YESciEval pairwise rubric the judge rates under.")
        elif data.get("scale") != RUBRIC and (data.get("rubric") or data.get("domain")):
            self.add_error("scale", "A YESciEval rubric is judged on the rubric scale.")
        problem = probabilities_error(data.get("judge", ""), data.get("probabilities", False), data.get("scale", ""))
        if problem:
            self.add_error("probabilities", problem)
            data["probabilities"] = False
        return data
