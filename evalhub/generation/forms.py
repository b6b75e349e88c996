from __future__ import annotations

from django import forms
from django.db.models import Count

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, select_prompts
from evalhub.core.privileged.answers import MatchMode
from evalhub.core.privileged.hints import RULE_BASED
from evalhub.core.prompts.builtin_criteria import CRITERION_FOR_TASK_TYPE
from evalhub.core.prompts.generation import PLACEHOLDERS
from evalhub.debates.forms import DEFAULT_AGENTS, JudgeRunForm
from evalhub.debates.models import DebateRun
from evalhub.generation.actions import candidate_model, do_register_candidate
from evalhub.generation.config import GenerationConfig
from evalhub.generation.models import PromptTemplate
from evalhub.llm.registry import parse_spec
from evalhub.llm.types import UnknownProvider, redact
from evalhub.system.forms import OnlyChoicePreselectedForm, SpecField

SPEC_HELP = "openai:gpt-4o-mini, anthropic:…, openai-compatible:http://host:8000/v1|model, transformers:/path"


def parse_tiers(text: str) -> list[int]:
    try:
        tiers = sorted({int(part) for part in text.replace(" ", "").split(",") if part != ""})
    except ValueError:
        raise forms.ValidationError("Write tiers as whole numbers separated by commas, e.g. 0, 1, 2, 3.") from None
    if not tiers:
        raise forms.ValidationError("Choose at least one tier (0 = no hint).")
    return tiers


class GenerationRunForm(OnlyChoicePreselectedForm):
    benchmark = forms.ModelChoiceField(Benchmark.objects.all())
    candidates = forms.ModelMultipleChoiceField(
        LanguageModel.objects.exclude(provider="").exclude(is_human=True),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Models with a provider. Leave empty (with hint tiers) to make and review the hints first.",
    )
    new_candidates = SpecField(
        per_line=True,
        required=False,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text=f"More candidates, one provider spec per line ({SPEC_HELP}); each becomes a model.",
    )
    prompts = forms.CharField(
        required=False,
        max_length=10000,
        label="Only these prompts",
        help_text="Prompt ids as in the imported file, separated by commas or spaces; blank: every prompt.",
    )
    category = forms.CharField(required=False, max_length=100, help_text="Only prompts of this category.")
    template = forms.ModelChoiceField(PromptTemplate.objects.all(), empty_label=None)
    tiers = forms.CharField(initial="0", help_text="Hint tiers, e.g. 0 or 0, 1, 2, 3: tier t shows the first t hints.")
    hint_count = forms.IntegerField(initial=3, min_value=1, label="Hints per prompt (k)")
    hint_maker = SpecField(
        also=(RULE_BASED,),
        required=False,
        max_length=500,
        help_text=f"Who writes the hints from the reference solution (Figure 9 prompt): a chat provider spec, or "
        f"{RULE_BASED} (rule-based: consecutive parts of the reference, none stating the final answer).",
    )
    samples = forms.IntegerField(
        initial=1,
        min_value=1,
        max_value=32,
        help_text="Responses per prompt, model, tier (use a temperature above 0 for more than one).",
    )
    temperature = forms.FloatField(initial=0.0, min_value=0.0, max_value=2.0)
    max_tokens = forms.IntegerField(initial=1024, min_value=1, max_value=32768)
    seed = forms.IntegerField(initial=0)
    answer_match = forms.ChoiceField(
        choices=[(m.value, m.value) for m in MatchMode],
        initial=MatchMode.SYMBOLIC,
        help_text="How accuracy compares final answers: exact text, normalised, or also SymPy-equal.",
    )
    anchor = forms.CharField(
        required=False,
        max_length=500,
        help_text="Win rates per tier are against this candidate (the paper's Table 3): a chosen model's slug, "
        "or one of the new candidates' specs.",
    )

    def clean_tiers(self) -> list[int]:
        return parse_tiers(self.cleaned_data["tiers"])

    def clean_new_candidates(self) -> list[str]:
        specs = [line.strip() for line in self.cleaned_data["new_candidates"].splitlines() if line.strip()]
        for spec in specs:
            try:
                parse_spec(spec)
            except UnknownProvider as error:
                raise forms.ValidationError(f"{redact(spec)}: {error}") from None
        return specs

    def clean(self):
        data = super().clean() or {}
        if self.errors:
            return data
        existing = list(data["candidates"])
        config = self._config(existing + [candidate_model(spec) for spec in data["new_candidates"]], anchor=None)
        for error in config.errors():
            self.add_error(None, error)
        try:
            data["prompt_ids"] = select_prompts(data["benchmark"], data["prompts"], data["category"].strip())
        except ValueError as error:
            self.add_error("prompts", str(error))
        anchor = data["anchor"].strip()
        if anchor and anchor not in {m.slug for m in existing} and anchor not in data["new_candidates"]:
            self.add_error("anchor", "The anchor must be one of the candidates: a chosen model's slug or a new spec.")
        return data

    def config(self) -> GenerationConfig:
        """The run's configuration, registering the new candidates' models first."""
        data = self.cleaned_data
        new = {spec: do_register_candidate(spec) for spec in data["new_candidates"]}
        candidates = list(data["candidates"]) + list(new.values())
        anchor = data["anchor"].strip()
        return self._config(candidates, new.get(anchor) or next((m for m in candidates if m.slug == anchor), None))

    def _config(self, candidates: list, anchor) -> GenerationConfig:
        """The form's configuration with these candidates (unsaved new ones while it is checked)."""
        data = self.cleaned_data
        return GenerationConfig(
            benchmark=data["benchmark"],
            prompt_ids=data.get("prompt_ids", ()),
            candidates=candidates,
            template=data["template"],
            tiers=data["tiers"],
            hint_count=data["hint_count"],
            hint_maker=data["hint_maker"].strip(),
            samples=data["samples"],
            temperature=data["temperature"],
            max_tokens=data["max_tokens"],
            seed=data["seed"],
            answer_match=data["answer_match"],
            anchor=anchor,
        )


class TemplateForm(forms.Form):
    slug = forms.SlugField(
        max_length=60, help_text="A new slug adds a template; an existing one changes it (until used)."
    )
    name = forms.CharField(max_length=200)
    system = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 6}))
    user = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Placeholders: "
        + ", ".join(f"{{{k}}} ({v})" for k, v in PLACEHOLDERS.items())
        + ". Without {hints}, hints are appended at tiers above 0. Write {{ and }} for braces.",
    )
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


class HintsForm(forms.Form):
    accept_leaks = forms.BooleanField(
        required=False,
        label="Use flagged hints anyway",
        help_text="Only when the flag is a false alarm (e.g. a one-digit answer that appears in a formula).",
    )

    def __init__(self, *args, hints: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for n, hint in enumerate(hints, start=1):
            self.fields[f"hint_{n}"] = forms.CharField(
                initial=hint, label=f"Hint {n}", widget=forms.Textarea(attrs={"rows": 4}), strip=True
            )
        self.order_fields([f"hint_{n}" for n in range(1, len(hints) + 1)] + ["accept_leaks"])
        self.count = len(hints)

    def hints(self) -> list[str]:
        return [self.cleaned_data[f"hint_{n}"] for n in range(1, self.count + 1)]


class AnchorComparisonForm(JudgeRunForm):
    """A single LLM judge on every tier's (candidate, anchor) pairs; the judge run's own fields plus the criterion."""

    criterion = forms.ModelChoiceField(Criterion.objects.all(), empty_label=None)
    field_order = ["criterion", "judge", "privileged_sources", "samples", "check_position"]

    def __init__(self, *args, benchmark: Benchmark | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if benchmark is not None and not self.is_bound:
            self.fields["criterion"].initial = suggested_criterion(benchmark)
        self.fields["privileged_sources"].initial = ["reference_answer"]
        self.fields["criteria_variant"].initial = "original"  # the criterion as written (Table 3)
        self.fields["privileged_sources"].help_text = "The privileged-information paper grades with the reference."
        for name in ("criteria_variant", "scale", "temperature", "max_tokens", "seed"):
            self.fields[name].widget = forms.HiddenInput()

    def comparison_fields(self) -> dict:
        data = dict(self.cleaned_data)
        return {"criterion": data.pop("criterion"), "agents": DEFAULT_AGENTS.split(), **data}


def suggested_criterion(benchmark: Benchmark) -> Criterion | None:
    """The criterion a benchmark's outputs are judged by unless someone picks another.

    The built-in that fits its task type (reasoning for question answering), else the one its
    debate runs used most, else none (the list's first).
    """
    slug = CRITERION_FOR_TASK_TYPE.get(benchmark.task_type)
    fitting = Criterion.objects.filter(slug=slug).first() if slug else None
    if fitting is not None:
        return fitting
    used = (
        DebateRun.objects.filter(benchmark=benchmark)
        .values("criterion")
        .annotate(runs=Count("id"))
        .order_by("-runs", "criterion")
        .first()
    )
    return Criterion.objects.filter(pk=used["criterion"]).first() if used else None
