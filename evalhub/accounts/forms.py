from __future__ import annotations

from django import forms

from evalhub.accounts.actions import MAX_DAYS
from evalhub.accounts.models import Scope


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, help_text="What will use it, e.g. 'CI pipeline'.")
    scope = forms.ChoiceField(choices=Scope.choices, initial=Scope.READ)
    days = forms.IntegerField(
        min_value=1,
        max_value=MAX_DAYS,
        required=False,
        initial=90,
        label="Expires in (days)",
        help_text="Empty: never. A token that expires is one fewer to forget.",
    )
