from __future__ import annotations

from django import forms

from evalhub.catalog.models import Benchmark, Criterion
from evalhub.core.alignment.versions import CHOICE, ORIGINAL, JudgeDefinition
from evalhub.core.prompts.criteria_variants import VARIANTS
from evalhub.debates.forms import PRIVILEGED_CHOICES
from evalhub.debates.models import DebateRun
from evalhub.system.forms import SecretsNotEchoedForm, SpecField


class JudgeForm(SecretsNotEchoedForm):
    """A judge's definition, by hand: a first version, or the next one of a judge (its fields prefilled)."""

    name = forms.SlugField(max_length=100, help_text="The judge's name; its versions share it.")
    spec = SpecField(max_length=300, help_text="Provider spec, e.g. openai:gpt-4o-mini or heuristic.")
    criteria_variant = forms.ChoiceField(choices=[(ORIGINAL, ORIGINAL), *[(v, v) for v in VARIANTS]])
    privileged_sources = forms.MultipleChoiceField(
        choices=PRIVILEGED_CHOICES, required=False, widget=forms.CheckboxSelectMultiple
    )
    samples = forms.IntegerField(min_value=1, max_value=20, initial=1)
    scale = forms.ChoiceField(choices=[(CHOICE, "1 / 2 / neither"), ("graded", "graded")], initial=CHOICE)
    temperature = forms.FloatField(min_value=0, max_value=2, initial=0.0)
    instructions = forms.CharField(widget=forms.Textarea, required=False, max_length=20_000)
    note = forms.CharField(max_length=5000, required=False, help_text="Why this version.")

    def definition(self, examples: tuple = ()) -> JudgeDefinition:
        data = self.cleaned_data
        return JudgeDefinition(
            spec=data["spec"].strip(),
            criteria_variant=data["criteria_variant"],
            privileged_sources=tuple(sorted(data["privileged_sources"])),
            samples=data["samples"],
            scale=data["scale"],
            temperature=data["temperature"],
            instructions=data["instructions"].strip(),
            examples=examples,
        )

    @classmethod
    def of(cls, name: str, judge: JudgeDefinition) -> JudgeForm:
        initial = judge.as_json() | {"name": name, "note": ""}
        return cls(initial=initial)


class RunVersionForm(forms.Form):
    reference = forms.ModelChoiceField(
        queryset=DebateRun.objects.order_by("-id"), help_text="The debate run whose pairs the version judges."
    )
    again = forms.BooleanField(required=False, label="Run again", help_text="Where this version already ran.")


class ImproveForm(forms.Form):
    """Few-shot from disagreements: the train pairs of a split benchmark that this version judged."""

    benchmark = forms.ModelChoiceField(
        queryset=Benchmark.objects.filter(label_split__isnull=False).order_by("name"), to_field_name="slug"
    )
    criterion = forms.ModelChoiceField(queryset=Criterion.objects.order_by("name"), to_field_name="slug")
    examples = forms.IntegerField(min_value=1, max_value=16, initial=4)
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)


class SettingsSearchForm(forms.Form):
    """Choice of settings over a fixed grid: which privileged sources the judge sees, and 1 or 3
    answers per pair (its criteria variant stays), each scored on the split's train pairs."""

    reference = forms.ModelChoiceField(
        queryset=DebateRun.objects.filter(benchmark__label_split__isnull=False).order_by("-id"),
        help_text="A debate run on a split benchmark: its train pairs are asked.",
    )

    @staticmethod
    def candidates() -> list[dict]:
        sources = [[], ["reference_answer"], ["rating_guidelines"], ["rating_guidelines", "reference_answer"]]
        return [{"privileged_sources": chosen, "samples": samples} for chosen in sources for samples in (1, 3)]


class RewriteForm(SecretsNotEchoedForm):
    """Instruction rewriting: a proposer model, a budget of proposals, the debate run whose train pairs score them."""

    reference = forms.ModelChoiceField(
        queryset=DebateRun.objects.filter(benchmark__label_split__isnull=False).order_by("-id"),
        help_text="A debate run on a split benchmark: its train pairs score each proposal.",
    )
    proposer = SpecField(max_length=300, help_text="Provider spec of the model that proposes, e.g. openai:gpt-4o.")
    proposals = forms.IntegerField(min_value=1, max_value=8, initial=4, help_text="The budget.")

    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)


class ReasonsForm(SecretsNotEchoedForm):
    """Learning from people's reasons: a proposer model, how many explained disagreements to keep as
    examples, the debate run whose train pairs score the candidate."""

    reference = forms.ModelChoiceField(
        queryset=DebateRun.objects.filter(benchmark__label_split__isnull=False).order_by("-id"),
        help_text="A debate run on a split benchmark: its train pairs score the candidate.",
    )
    proposer = SpecField(max_length=300, help_text="Provider spec of the model that distils the reasons.")
    examples = forms.IntegerField(
        min_value=0, max_value=8, initial=4, help_text="Explained disagreements kept as examples."
    )
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)
