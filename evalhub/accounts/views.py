"""A person's profile: their roles and their personal API tokens (made, listed, revoked)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from evalhub.accounts.actions import TokenRejected, do_create_token, do_revoke_token
from evalhub.accounts.forms import TokenForm
from evalhub.accounts.models import ApiToken


def _page(request, form: TokenForm, made: str = "", status: int = 200):
    tokens = ApiToken.objects.filter(user=request.user)
    return render(request, "accounts/profile.html", {"form": form, "tokens": tokens, "made": made}, status=status)


def profile(request):
    """Every signed-in person may hold tokens: a token never does more than its person's roles allow."""
    return _page(request, TokenForm())


@require_POST
def create_token(request):
    form = TokenForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    try:
        _, text = do_create_token(
            request.user, form.cleaned_data["name"], form.cleaned_data["scope"], form.cleaned_data["days"]
        )
    except TokenRejected as rejected:
        form.add_error(None, str(rejected))
        return _page(request, form, status=400)
    # Shown in this response only: never stored, never in a redirect's URL or the session.
    return _page(request, TokenForm(), made=text)


@require_POST
def revoke_token(request, pk: int):
    do_revoke_token(get_object_or_404(ApiToken, pk=pk, user=request.user), request.user)
    return redirect("profile")
