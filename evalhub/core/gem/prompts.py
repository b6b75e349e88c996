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


# Bump when any prompt below changes: GRE-bench tables record it, so runs made with other
# prompts show as not comparable.
PROMPT_VERSION = "gem-2025-c1c2c4-d3d4"

# GEM, Appendix C.1 "Judgments preprocessing": system prompt; the user turn is the review.
PREPROCESS_SYSTEM = (
    "Carefully read the text of a scientific paper review. You should summarize each evaluation in the review in a "
    "separate line. Begin each summary line with one of the following phrases: 'The reviewer appreciates', 'The "
    "reviewer criticizes', 'The reviewer questions', 'The reviewer suggests'. You need to keep the summary as concise "
    "as possible, excluding specific details about the paper's content, such as topics, ideas, methods, findings, "
    "and any mathematical symbols.\n\n"
    "You should ensure that even if multiple evaluations are mentioned in the same sentence in the original review, "
    "you should still split it into separate lines. For example, you should not output a line like 'The reviewer "
    "appreciates the well-written paper and good experimental performance'. In contrast, you should output 'The "
    "reviewer appreciates the well-written paper' and 'The reviewer appreciates good experimental performance' in "
    "two lines."
)

# GEM, Appendix C.4 "Summary of author-stated strengths and weaknesses" (for GEM-S (ASSW)).
ASSW_SYSTEM = (
    "You are given a paper submission for a top-tier Machine Learning conference. Your goal is to identify and list "
    "the strengths and weaknesses that the paper claims about itself. This task requires careful reading of the "
    "paper.\n\n"
    "Please follow these steps to complete the task:\n\n"
    "1. Carefully read the entire paper submission. As you read, identify instances where the authors mention "
    "strengths or positive aspects of their research, methodology, results, or contributions. These are the "
    "strengths claimed by the paper. Also, identify instances where the authors mention limitations, weaknesses, or "
    "areas for future improvement in their work. These are the weaknesses claimed by the paper.\n"
    "2. Compile your findings into two separate lists: one for strengths and one for weaknesses.\n"
    "3. For each list, write each point on a separate line, keeping it concise. Add an extra blank line between each "
    "point for clarity.\n"
    "4. Format your output as follows:\n\n"
    ";strengths_claimed_by_the_paper;\n\n"
    "[List each strength claimed by the paper in separate lines, with an extra blank line between each point]\n\n"
    ";/strengths_claimed_by_the_paper;\n\n"
    ";weaknesses_claimed_by_the_paper;\n\n"
    "[List each weakness claimed by the paper in separate lines, with an extra blank line between each point]\n\n"
    ";/weaknesses_claimed_by_the_paper;\n\n"
    "Important: Focus only on the strengths and weaknesses that the paper claims about itself. Do not include your "
    "own evaluation or opinion of the paper's merits or shortcomings. Do not include the strengths and weaknesses of "
    "the baseline. Your task is to report what the authors themselves have stated about their work's strengths and "
    "limitations."
)

# GEM, Appendix D.3.2 "Deletion & completion": the placeholder and the completion prompt.
MISSING_SENTENCE = "[There is one missing sentence]"
COMPLETION_SYSTEM = (
    "You are tasked with completing missing sentences of a peer review evaluation given by the user while keeping "
    "all its existing sentences. Your goal is to complete all missing sentences indicated by [There is one missing "
    "sentence] of this peer review evaluation, following these rules:\n\n"
    "- Insert new sentences that don't contribute significant information.\n"
    "- Place these sentences between existing sentences where they seem most natural.\n"
    "- Keep the overall language style similar.\n"
    "- Ensure these added sentences don't contradict or substantially alter the original content.\n\n"
    "Remember to maintain the essence and order of the original content while completing all missing sentences "
    "indicated by [There is one missing sentence]."
)

# GEM, Appendix D.3.3 "Abstract-only review": the user turn is the abstract.
ABSTRACT_ONLY_SYSTEM = (
    "You are given an abstract of a paper submission for a top-tier Machine Learning conference. You need to write a "
    "detailed peer review of the paper with only the abstract. Please read the abstract carefully. Once you have "
    "finished reading, please provide the following in your review:\n\n"
    'First, write a concise summary of the key points and contributions of the paper in "Summary Of The Paper" '
    "section.\n\n"
    'Next, in the "Strength And Weaknesses" section, think critically about the strengths and weaknesses of the '
    "submission. Give a numbered list of at least 4 key reasons why this paper should potentially be accepted to the "
    "conference. For each reason, use sub-bullet points to provide detailed arguments and evidence from the paper to "
    "support that reason. Then, give a numbered list of at least 4 key reasons why this paper should potentially be "
    "rejected from the conference. Again, for each reason, use sub-bullet points to provide detailed arguments and "
    "evidence from the paper to support that reason. After weighing the reasons for and against, think of some "
    "questions you have about the work.\n\n"
    'Then, finish the "Clarity, Quality, Novelty And Reproducibility" and "Summary Of The Review" sections.\n\n'
    "Remember, as a reviewer your job is to rigorously evaluate the strengths and weaknesses of the work and to "
    "provide critical but constructive feedback to the authors. Be thorough, specific and detailed in your arguments "
    "and feedback. Highlight both the positives and negatives you see, and justify your points carefully with "
    "reference to the content of the paper."
)

# GEM, Appendix D.4.1 "LLM rephrasing".
REPHRASE_SYSTEM = (
    "You are tasked with rewriting a peer review evaluation. You should follow these guidelines:\n\n"
    "1. Maintain the overall structure and organization of the review.\n"
    "2. Improve the writing and make the language more natural and native-sounding.\n"
    "3. Correct any grammatical errors or awkward phrasing.\n\n"
    "Remember to maintain the overall structure and content of the original review, but aim to enhance its "
    "readability and fluency."
)


# GEM, Appendix D.4.2 "Meaningless elongation": one summary line of two strengths or weaknesses.
def key_points_system(kind: str) -> str:
    return (
        f"You are given a peer review of a scientific paper, please identify two key {kind} of the scientific paper "
        "from the review in a single, concise line, using two phrases separated by 'and'."
    )


def chat(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


# GEM, Appendix D.1 "LMExaminer" baseline (after Bai et al., 2024): a 0–10 review-quality score.
EXAMINER_SYSTEM = (
    "You are an expert tasked with evaluating the quality of a review for a Machine Learning paper. Your goal is to "
    "assess how well the review critiques the paper and provides valuable feedback to the authors. The paper will be "
    "given after '[Paper]' and the review will be given after '[Review]'.\n\n"
    "To judge the quality of this review, consider the following criteria:\n\n"
    "1. Understanding: Does the reviewer demonstrate a clear understanding of the paper's main contributions, "
    "methodology, and results?\n"
    "2. Coverage: Does the review address all major aspects of the paper, including the problem statement, "
    "methodology, experiments, results, and conclusions?\n"
    "3. Substantiation: Does the reviewer provide specific examples or references from the paper to support their "
    "comments and criticisms?\n"
    "4. Constructiveness: Does the review offer helpful suggestions for improvement or identify areas where the paper "
    "could be strengthened?\n\n"
    "For each criterion, provide a detailed analysis of how well the review meets the standard.\n\n"
    "After analyzing each criterion, provide an overall assessment of the review's quality. Consider how well it "
    "serves its purpose of offering valuable feedback to the authors.\n\n"
    "Finally, assign a score to the review on a scale of 0 to 10, where 0 is the lowest quality, 5 is the average "
    "quality, and 10 is the highest quality.\n\n"
    "Present your evaluation in the following format:\n\n"
    "<analysis>\n\n[Your detailed analysis here]\n\n</analysis>\n\n"
    "<overall_assessment>\n\n[Your overall assessment here]\n\n</overall_assessment>\n\n"
    "<overall_score>\n\n[Your final quality score here]\n\n</overall_score>"
)


def examiner_messages(paper: str, review: str) -> list[dict[str, str]]:
    return chat(EXAMINER_SYSTEM, f"[Paper]\n\n{paper}\n\n[Review]\n\n{review}")


def parse_examiner_score(text: str) -> float | None:
    """The number inside <overall_score>…</overall_score>, 0–10; None when absent or out of range."""
    import re

    match = re.search(r"<overall_score>\s*(?:\[)?\s*(\d+(?:\.\d+)?)", text or "")
    if not match:
        return None
    value = float(match.group(1))
    return value if 0 <= value <= 10 else None
