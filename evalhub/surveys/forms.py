"""The survey editor: instructions, then one row per metric and per quality issue (no JSON to hand-write)."""

from __future__ import annotations

from django import forms

from evalhub.surveys.actions import SurveyRejected
from evalhub.surveys.models import SurveyVersion

EMPTY_ROWS = 3  # blank rows under the existing ones: room to add without JavaScript
MAX_ROWS = 200  # more than any survey needs; a forged row count beyond it is refused, not rendered


class MetricRow(forms.Form):
    key = forms.CharField(max_length=100, required=False, help_text="Short id, e.g. fluency")
    name = forms.CharField(max_length=200, required=False)
    definition = forms.CharField(max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2}))


class IssueRow(forms.Form):
    key = forms.CharField(
        max_length=100, required=False, help_text="The perturbation's name, as DHP runs call it, e.g. typos"
    )
    description = forms.CharField(max_length=2000, required=False, widget=forms.Textarea(attrs={"rows": 2}))


def _rows(form_class: type[forms.Form]) -> type[forms.BaseFormSet]:
    return forms.formset_factory(
        form_class, extra=EMPTY_ROWS, can_delete=True, max_num=MAX_ROWS, absolute_max=MAX_ROWS, validate_max=True
    )


MetricRows = _rows(MetricRow)
IssueRows = _rows(IssueRow)


def editor_forms(version: SurveyVersion | None, data=None) -> tuple[forms.BaseFormSet, forms.BaseFormSet]:
    """The metric and issue rows: the latest version's to start from, or the submitted ones."""
    # Bound rows are read as submitted, never against the stored ones: a row left as it was would
    # otherwise count as "unchanged" and, past the declared initial count, be dropped as blank.
    start = version if data is None else None
    metrics = MetricRows(data, initial=start.metrics if start else None, prefix="metrics")
    issues = IssueRows(data, initial=start.issues if start else None, prefix="issues")
    return metrics, issues


def submitted_entries(rows: forms.BaseFormSet, kind: str) -> list[dict[str, str]]:
    """The non-blank rows a person kept, in order; a forged or over-long submission is refused."""
    if not rows.is_valid():
        reasons = [str(e) for e in rows.non_form_errors()]
        reasons += [str(e) for form in rows.forms for errors in form.errors.values() for e in errors]
        raise SurveyRejected(f"{kind}: {' '.join(reasons) or 'the rows could not be read.'}")
    entries = []
    for form in rows.forms:
        values = {name: value.strip() for name, value in form.cleaned_data.items() if name != "DELETE"}
        if form.cleaned_data.get("DELETE") or not any(values.values()):
            continue  # removed, or one of the blank rows left blank
        entries.append(values)
    return entries
