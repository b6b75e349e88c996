"""Form helpers shared by the apps' views."""

from __future__ import annotations

from django import forms


def form_reasons(form) -> str:
    """A bound, invalid form's errors in one line: `field: reason; field: reason`."""
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())


class OnlyChoicePreselectedForm(forms.Form):
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
