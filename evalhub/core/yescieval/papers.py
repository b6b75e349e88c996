"""The papers a YESciEval prompt is about: their titles and abstracts, which every rubric's prompt shows
the judge ("<paper-titles-and-abstracts>").

A benchmark file gives them in the column `metadata.papers` (stored in the prompt's metadata): a list of
{"title": …, "abstract": …} objects, an object {title: abstract}, or either as JSON text (a CSV cell). A
prompt without them shows its `source` (evalhub's field for the text a judge reads beside the answer) as
one untitled paper, as evalhub's YESciEval runs did before the package's prompts.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

PAPERS = "papers"  # the metadata key (the import's column `metadata.papers`)


def papers_of(metadata: Mapping[str, Any], source: str = "") -> dict[str, str]:
    """{title: abstract} in the order given; ValueError for a value that is not papers."""
    given = metadata.get(PAPERS)
    if given in (None, "", [], {}):
        return {"": source} if source.strip() else {}
    if isinstance(given, str):
        try:
            given = json.loads(given)
        except ValueError:
            raise ValueError("metadata.papers is not JSON: give a list of {title, abstract} objects") from None
    if isinstance(given, Mapping):
        return {str(title): str(abstract) for title, abstract in given.items()}
    if isinstance(given, list) and all(isinstance(paper, Mapping) for paper in given):
        # An untitled paper among several is named by its place: a dict would keep one of them only.
        untitled = "" if len(given) == 1 else "Paper {}"
        return {
            str(paper.get("title") or untitled.format(n)): str(paper.get("abstract", ""))
            for n, paper in enumerate(given, 1)
        }
    raise ValueError("metadata.papers must be a list of {title, abstract} objects or an object {title: abstract}")
