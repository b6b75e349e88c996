from __future__ import annotations

from urllib.parse import urlencode

from django import forms

from evalhub.reads.battles import SOURCES, Filters


class BattleFilterForm(forms.Form):
    """The pairwise board's filters (GET). Blank means all; no source ticked leaves `sources` empty, for
    the view to fill with the sources that have battles under the other filters (`with_default_sources`)."""

    source = forms.MultipleChoiceField(
        choices=list(SOURCES.items()), required=False, widget=forms.CheckboxSelectMultiple, label="Verdicts from"
    )
    criterion = forms.CharField(required=False, max_length=100)
    scenario = forms.CharField(required=False, max_length=100)
    benchmark = forms.CharField(required=False, max_length=100)
    responses = forms.CharField(required=False, max_length=100)
    style = forms.BooleanField(required=False, label="Style control")
    interval = forms.ChoiceField(
        required=False,
        choices=[("bootstrap", "Bootstrap (200 resamples)"), ("sandwich", "Sandwich (closed form, arena-rank)")],
        label="Intervals",
    )
    reweighted = forms.BooleanField(required=False, label="Reweight pairs")
    judge = forms.CharField(required=False, max_length=300, label="Judge")

    def filters(self) -> Filters:
        data = self.cleaned_data
        filters = Filters(
            sources=tuple(s for s in SOURCES if s in data["source"]),
            criterion=data["criterion"],
            scenario=data["scenario"],
            benchmark=data["benchmark"],
            responses=data["responses"],
            style=data["style"],
            interval=data["interval"] or "bootstrap",
            reweighted=data["reweighted"],
            judge=data["judge"],
        )
        return filters


def filters_query(filters: Filters) -> str:
    """The query string that gives these filters back through the form (links drawn once for a board)."""
    given = [("source", source) for source in filters.sources]
    given += [(name, getattr(filters, name)) for name in ("criterion", "scenario", "benchmark", "responses", "judge")]
    given += [("style", "on" if filters.style else ""), ("reweighted", "on" if filters.reweighted else "")]
    given += [("interval", "" if filters.interval == "bootstrap" else filters.interval)]
    return urlencode([(name, value) for name, value in given if value])
