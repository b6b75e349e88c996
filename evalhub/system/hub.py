"""Pushing an export to a Hugging Face hub as a dataset repository, with huggingface_hub's own client.

The token is named, never carried: the push reads it from an environment variable (HF_TOKEN unless
another is named), so no command line, log or stored row holds it. `endpoint` (or huggingface_hub's own
HF_ENDPOINT) points at another hub, e.g. a company's or a test's.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from evalhub.llm.types import redact


class HubPushFailed(Exception):
    """Why the push did not happen (or did not finish): a sentence a person can act on."""


def push_dataset(
    files: Mapping[str, bytes],
    repo_id: str,
    *,
    token_variable: str = "HF_TOKEN",
    endpoint: str | None = None,
    private: bool = True,
    message: str = "Export from evalhub",
) -> str:
    """Create the dataset repository `repo_id` if it is missing (private unless asked) and commit `files`
    (path in the repository → content) in one commit; the commit's URL."""
    from huggingface_hub import CommitOperationAdd, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    token = os.environ.get(token_variable, "")
    if not token:
        raise HubPushFailed(f"set {token_variable} to a Hugging Face token that may write to {repo_id}")
    if repo_id.count("/") != 1:
        raise HubPushFailed(f"{repo_id!r}: name the dataset as NAMESPACE/NAME")
    api = HfApi(endpoint=endpoint, token=token)
    operations = [CommitOperationAdd(path_in_repo=path, path_or_fileobj=data) for path, data in files.items()]
    try:
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        commit = api.create_commit(repo_id, operations, commit_message=message, repo_type="dataset")
    except (HfHubHTTPError, OSError) as error:  # a refusal, or a hub that cannot be reached
        raise HubPushFailed(redact(f"the hub refused or could not be reached: {error}").replace(token, "…")) from None
    return str(commit.commit_url)
