"""GEM's prompts, verbatim from the paper (GEM, Appendix C)."""

from __future__ import annotations

NOT_AVAILABLE = "Not Available"

# GEM, Appendix C.2 "Judgments prediction": system prompt.
PREDICTION_SYSTEM = (
    "You are the second reviewer for a scientific paper. You are given the abstract of the paper and a list of "
    "review judgments from the first reviewer, starting with 'The reviewer appreciates/criticizes/questions/"
    "suggests'. Your task is to provide your own judgments of the paper based on the given materials. You should "
    "create a separate line for each judgment you have, starting with 'The reviewer appreciates/criticizes/"
    "questions/suggests'. Ensure your judgments are concise, excluding specific details about the paper's content."
)


def prediction_messages(synopsis: str | None, first_review: str | None) -> list[dict[str, str]]:
    """The C.2 prompt. `synopsis` None → "Not Available" (GEM); `first_review` None → the marginal."""
    user = (
        f"[Abstract of the paper]\n\n{synopsis or NOT_AVAILABLE}\n\n"
        f"[Review judgments from the first reviewer]\n\n{first_review or NOT_AVAILABLE}"
    )
    return [{"role": "system", "content": PREDICTION_SYSTEM}, {"role": "user", "content": user}]
