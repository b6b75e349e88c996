"""Each judge's corrected board: its battles as a Bradley–Terry board corrected by people's labels on
the same battles (`statistics.corrected_ratings`), by the estimator the report's scope asks for."""

from __future__ import annotations

import functools
import hashlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import pandas as pd

from evalhub.core.judge_lab.measures import FIRST, SECOND, TIE, JudgeVerdicts
from evalhub.core.judge_lab.report_types import MODEL, JudgeInfo
from evalhub.core.statistics.corrected_ratings import CorrectedBoard, corrected_bradley_terry
from evalhub.core.statistics.estimators import ESTIMATORS, OTHER_JUDGES

MAX_OTHER_JUDGES = 3  # several judges: at most this many others beside the judge, the first by name


class Battles(Protocol):
    """Per pair (one row each): its two models, prompt, prompt category and the queue's adjudication."""

    model_1: np.ndarray
    model_2: np.ndarray
    cluster: np.ndarray
    category: np.ndarray
    adjudicated: np.ndarray


def share_of_first(verdicts: np.ndarray) -> np.ndarray:
    """1 for FIRST, 0 for SECOND, ½ for TIE, NaN for no verdict."""
    share: np.ndarray = np.select([verdicts == FIRST, verdicts == SECOND, verdicts == TIE], [1.0, 0.0, 0.5], np.nan)
    return share


def shares(mine: JudgeVerdicts) -> np.ndarray:
    """Per pair the judge's share for the first model: its probability where it gave one, else 1, 0 or ½."""
    out: np.ndarray = np.where(np.isnan(mine.probability), share_of_first(mine.primary), mine.probability)
    return out


def other_judges(
    judge: JudgeInfo, battles: np.ndarray, shares_of: Mapping[str, np.ndarray], judges: Sequence[JudgeInfo]
) -> np.ndarray | None:
    """The other LLM judges' shares on the judge's battles: those that judged every one of them, at most
    MAX_OTHER_JUDGES, the first by name (a rule fixed in advance, not the ones that agree best)."""
    columns: list[np.ndarray] = []
    for other in sorted(judges, key=lambda j: (j.name, j.id)):
        if other.id == judge.id or other.kind != MODEL or len(columns) == MAX_OTHER_JUDGES:
            continue
        share = shares_of[other.id][battles]
        if not np.isnan(share).any():
            columns.append(share)
    return np.column_stack(columns) if columns else None


@dataclass(frozen=True)
class PeoplesShares:
    """What every judge's corrected board reads alike, found once per report (per judge it was a tenth of a
    refresh at ten million labels, the model names compared as strings each time): per pair people's share
    for the first model (NaN where nobody labelled it), and whether it is a battle of two models."""

    share: np.ndarray
    two_models: np.ndarray

    @classmethod
    def of(cls, pairs: Battles, people_counts: np.ndarray) -> PeoplesShares:
        """People's share of verdicts for the first model, else the queue's adjudication."""
        total = people_counts.sum(axis=1)
        people = np.full(len(total), np.nan)
        with np.errstate(invalid="ignore", divide="ignore"):
            people = np.where(total > 0, (people_counts[:, 0] + 0.5 * people_counts[:, 2]) / total, people)
        people = np.where(np.isnan(people), share_of_first(pairs.adjudicated), people)
        two_models = (pairs.model_1 != "") & (pairs.model_2 != "") & (pairs.model_1 != pairs.model_2)
        return cls(people, two_models)


def corrected_board(
    judge: JudgeInfo,
    pairs: Battles,
    shares_of: Mapping[str, np.ndarray],
    judges: Sequence[JudgeInfo],
    people: PeoplesShares,
    estimator: str,
) -> CorrectedBoard | str | None:
    """The judge's battles (its share for the first model) as a Bradley–Terry board corrected by
    people's labels on the same battles (`PeoplesShares`). Under AUTO it is stratified by the prompts'
    category where the judge's error differs across them; several judges only when asked, since each
    board is one judge's. None where people labelled none of its battles. `shares_of`: each judge's
    `shares`."""
    share = shares_of[judge.id]
    battles = ~np.isnan(share) & people.two_models
    if not (battles & ~np.isnan(people.share)).any():
        return None  # nothing to correct with, nothing to say
    # Battles on one prompt share its difficulty and style: the intervals are cluster-robust by prompt.
    return corrected_bradley_terry(
        pairs.model_1[battles],
        pairs.model_2[battles],
        share[battles],
        people.share[battles],
        clusters=pairs.cluster[battles],
        categories=pairs.category[battles],
        # Read only where the estimator asked for reads them (AUTO never combines: a board is one judge's).
        others=other_judges(judge, battles, shares_of, judges) if _asked_reads(estimator, OTHER_JUDGES) else None,
        asked=estimator,
    )


def _asked_reads(estimator: str, source: str) -> bool:
    return estimator in ESTIMATORS and source in ESTIMATORS[estimator].reads


# --- a board's inputs as one digest: a board whose inputs did not change is taken from the last report ------


@dataclass(frozen=True)
class PairCodes:
    """Each pair's models and category as 64-bit digests of their names (not their positions, which move as
    pairs are added): what a board's inputs digest reads of the pairs, made once a report."""

    model_1: np.ndarray
    model_2: np.ndarray
    category: np.ndarray

    @classmethod
    def of(cls, pairs: Battles) -> PairCodes:
        return cls(_name_codes(pairs.model_1), _name_codes(pairs.model_2), _name_codes(pairs.category))


def _name_codes(values: np.ndarray) -> np.ndarray:
    # Hashed, not sorted: sorting 400,000 Python strings (ten million labels' pairs) took a second.
    positions, names = pd.factorize(values, use_na_sentinel=False)
    digests = [int.from_bytes(hashlib.blake2b(str(name).encode(), digest_size=8).digest(), "little") for name in names]
    codes: np.ndarray = np.array(digests, dtype=np.uint64)[positions]
    return codes


@functools.cache
def _fitting_code() -> bytes:
    """The source of the modules a board is fitted by: a board kept from a report computed by other code
    is not taken."""
    from evalhub.core.statistics import corrected_ratings, estimators, logistic_ppi, ppi, ppi_extended

    digest = hashlib.blake2b(digest_size=16)
    for module in (sys.modules[__name__], corrected_ratings, estimators, logistic_ppi, ppi, ppi_extended):
        digest.update(Path(str(module.__file__)).read_bytes())
    return digest.digest()


def board_inputs(
    judge: JudgeInfo,
    pairs: Battles,
    codes: PairCodes,
    shares_of: Mapping[str, np.ndarray],
    people: PeoplesShares,
    estimator: str,
) -> str | None:
    """A digest of everything `corrected_board` fits the judge's board from: its battles' models, categories
    and prompts (as a partition: which battles share one), its shares and people's, the estimator and the
    fitting code. Two reports with the same digest for a judge have the same board, so a refresh after a
    label elsewhere fits only the boards whose inputs moved. None where the estimator reads other judges
    (their every share would be inputs too): such boards are fitted each time."""
    if _asked_reads(estimator, OTHER_JUDGES):
        return None
    share = shares_of[judge.id]
    battles = ~np.isnan(share) & people.two_models
    _, first_battle, cluster_of = np.unique(pairs.cluster[battles], return_index=True, return_inverse=True)
    partition = np.argsort(np.argsort(first_battle))[cluster_of.ravel()]  # prompts numbered by first battle
    digest = hashlib.blake2b(_fitting_code(), digest_size=16)
    digest.update(estimator.encode())
    for part in (
        codes.model_1[battles],
        codes.model_2[battles],
        codes.category[battles],
        partition.astype(np.int64),
        share[battles],
        people.share[battles],
    ):
        digest.update(np.ascontiguousarray(part).tobytes())
    return digest.hexdigest()
