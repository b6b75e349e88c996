"""Form helpers shared by the apps' views."""

from __future__ import annotations

from typing import Any

from django import forms

from evalhub.llm.registry import parse_spec
from evalhub.llm.types import CarriesCredential, UnknownProvider, redact


def form_reasons(form) -> str:
    """A bound, invalid form's errors in one line: `field: reason; field: reason`."""
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


class SpecField(forms.CharField):
    """A provider spec typed into a form (one per line with `per_line`), refused where it enters if it
    carries a credential; whether it names a known provider and model is the run's configuration's
    check, which names every problem of the form at once. `also`: other words the field takes."""

    def __init__(self, *args, per_line: bool = False, also: tuple[str, ...] = (), **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.per_line, self.also = per_line, also

    def validate(self, value: str) -> None:
        super().validate(value)
        specs = value.splitlines() if self.per_line else [value]
        for spec in (line.strip() for line in specs):
            if spec and spec not in self.also:
                try:
                    parse_spec(spec)
                except CarriesCredential as error:
                    raise forms.ValidationError(str(error)) from None
                except UnknownProvider:
                    pass  # named by the configuration's check


class SecretsNotEchoedForm(forms.Form):
    """A refused form is shown again with what was typed, but never a credential in it: a key typed into
    a spec field (refused by evalhub.llm.registry) comes back masked by the one redaction function."""

    def full_clean(self) -> None:
        super().full_clean()
        if not self.is_bound or not self.errors:
            return
        data: Any = self.data.copy()  # type: ignore[attr-defined]  # a QueryDict or a dict, both copy
        for name, field in self.fields.items():
            key = self.add_prefix(name)
            if isinstance(field, forms.CharField) and key in data:
                values = data.getlist(key) if hasattr(data, "getlist") else [data[key]]
                masked = [redact(value) if isinstance(value, str) else value for value in values]
                if hasattr(data, "setlist"):
                    data.setlist(key, masked)
                else:
                    data[key] = masked[0]
        self.data = data


class OnlyChoicePreselectedForm(SecretsNotEchoedForm):
    """A form whose required choice fields with a single option start with that option chosen.

    A new instance has one benchmark, one evaluation LM, one criterion: asking a person to pick the
    only possible answer is a step that can only be got wrong. Bound forms are left as submitted.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.is_bound:
            return
        for name, field in self.fields.items():
            if field.required and self.initial.get(name) is None and field.initial in (None, "", []):
                only = only_choice(field)
                if only is not None:
                    many = isinstance(field, forms.MultipleChoiceField | forms.ModelMultipleChoiceField)
                    field.initial = [only] if many else only


def only_choice(field: forms.Field) -> object | None:
    """The value of a choice field's single option, or None when it has none or several."""
    values: list[object]
    if isinstance(field, forms.ModelChoiceField | forms.ModelMultipleChoiceField):
        if field.queryset is None:
            return None
        values = list(field.queryset.values_list("pk", flat=True)[:2])  # one small query, not every row
    elif isinstance(field, forms.ChoiceField):
        choices: list[tuple[object, object]] = list(field.choices)  # type: ignore[arg-type]  # a list once bound
        if any(isinstance(label, list | tuple) for _value, label in choices):
            return None  # option groups: not worth guessing
        values = [value for value, _label in choices if value not in ("", None)]
    else:
        return None
    return values[0] if len(values) == 1 else None
