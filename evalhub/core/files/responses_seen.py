"""The responses a judgment or score file names, each checked once as a row of the benchmark schema.

A labels file names a response on many rows; a later row may repeat it but not change its text. The
first sight of each (prompt, model, variant) and a hash of its text were kept in a dict: about 400
bytes a response, and a file in the shape of Chatbot Arena's votes (a new conversation a row) names two
new responses a row: 0.8 KiB a row, gigabytes at a few million votes. They are kept on disk now
(DiskMap), behind a cache of the last CACHE_SIZE seen, so a study's file (every response on many rows)
is answered from memory and an Arena file keeps a few bytes a row.

A row may name a response by reference instead (`refer`: no text, the benchmark holds it): such a key is
kept on disk too, and `finish` asks `held` (the caller's lookup of the benchmark's stored responses) about
those the file never gives the text of, refusing each the benchmark lacks."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any, NamedTuple

from evalhub.core.files.benchmarks import ParsedFile, ResponseChecker
from evalhub.core.files.disk_map import DiskMap, key_of
from evalhub.core.files.rows import RowError

PROMPT_COLUMNS = ("prompt", "category")  # the prompt fields a labels row may carry


class FirstSight(NamedTuple):
    line: int
    # Python's own hash of the response's text (SipHash, 64 bits, keyed afresh in each process): the map
    # lives and dies in this one. blake2b cost 600 ns a row's response against 50, most of a study's add.
    digest: int


class Reference(NamedTuple):
    """A response a row named without its text: the first row that did, and how it named it."""

    seq: int
    line: int
    named: str
    prompt_id: str
    model: str
    variant: str


# Which of some (prompt id, model slug, variant) the benchmark holds: a lookup the importer gives.
HeldResponses = Callable[[Collection[tuple[str, str, str]]], Collection[tuple[str, str, str]]]


class _Pending(NamedTuple):
    key: tuple[str, str, str]
    seq: int  # which add it was: errors keep the order their rows were added in
    line: int
    digest: int
    response: dict[str, Any]  # the row of the benchmark schema it is checked as, if it is new
    named: str  # how an error names it ("response_a"), with the model's slug after


class ResponsesSeen:
    """Add each response a row names; `finish` gives the prompts and responses, checked as a benchmark
    file's are (`ResponseChecker`, in the file's order), and `errors` names each row whose response
    differs from its first sight. A response the cache cannot answer waits until SETTLE_BATCH do, then
    they are looked up on disk together. One named again while it waits is looked up at once, alone:
    a study's file names each response on hundreds of rows in a row, and each such row waited for the
    settle (the cache learns a response only there), so nearly every row of it was settled."""

    CACHE_SIZE = 1 << 17
    SETTLE_BATCH = 10_000

    def __init__(
        self,
        unit: str,
        *,
        known_models: Collection[str],
        allow_new_models: bool,
        held: HeldResponses | None = None,
    ) -> None:
        # A judged or scored answer may be empty (a model that said nothing): it is kept as it is.
        self.checker = ResponseChecker(
            unit,
            known_models=known_models,
            allow_new_models=allow_new_models,
            responses_seen_once=True,
            empty_answers=True,
        )
        self.held = held
        self._referenced: DiskMap[Reference] = DiskMap(Reference)
        self._references: dict[tuple[str, str, str], tuple[Reference, dict[str, Any]]] = {}  # not yet settled
        self.unit = unit
        self.errors: list[RowError] = []
        self._errors: list[tuple[int, RowError]] = []  # with the add that found each, sorted by it at the end
        self._first = DiskMap(FirstSight)
        self._recent: dict[tuple[str, str, str], FirstSight] = {}
        self._pending: dict[tuple[str, str, str], _Pending] = {}  # in the order first named
        self._added = 0

    def add(
        self, line: int, row: dict[str, Any], prompt_id: str, model: str, text: str, *, named: str, variant: str = ""
    ) -> None:
        """`named` says which of the row's responses it is ("response_a"); an error adds the model."""
        self._added += 1
        digest = hash(text)
        key = (prompt_id, model, variant)
        seen = self._recent.get(key)
        if seen is None:
            first = self._pending.get(key)
            if first is None:
                # Only the prompt fields the row carries: a labels file leaves the rest of a stored prompt as it is.
                response = {"prompt_id": prompt_id, **{name: row[name] for name in PROMPT_COLUMNS if name in row}}
                response |= {"model": model, "response": text, **({"response_variant": variant} if variant else {})}
                self._pending[key] = _Pending(key, self._added, line, digest, response, named)
                if len(self._pending) >= self.SETTLE_BATCH:
                    self._settle()
                return
            seen = self._first.get(key_of(*key)) or FirstSight(first.line, first.digest)
            self._remember(key, seen)
        if digest != seen.digest:
            self._differs(self._added, line, named, key, seen)

    def refer(
        self, line: int, row: dict[str, Any], prompt_id: str, model: str, *, named: str, variant: str = ""
    ) -> None:
        """A response the row names without its text: the one the file gives elsewhere, or the benchmark's."""
        self._added += 1
        key = (prompt_id, model, variant)
        if key in self._recent or key in self._pending or key in self._references:
            return
        prompt = {"prompt_id": prompt_id, **{name: row[name] for name in PROMPT_COLUMNS if name in row}}
        reference = Reference(self._added, line, named, prompt_id, model, variant)
        self._references[key] = (reference, {**prompt, "model": model})
        if len(self._references) >= self.SETTLE_BATCH:
            self._settle()

    def _settle_references(self) -> None:
        """The references since the last call: each key met for the first time has its prompt and model
        checked as a benchmark row's (its prompt then placed like any other) and is kept."""
        references, self._references = self._references, {}
        names = [key_of(*key) for key in references]
        known = self._referenced.get_many(names)
        given = self._first.get_many(names)
        new = []
        for name, (reference, row) in zip(names, references.values(), strict=True):
            if name in known or name in given:
                continue
            self.checker.check(reference.line, row, by_reference=True)
            new.append((name, reference))
        self._referenced.put_many(new)

    def _unheld(self) -> None:
        """Each response named only by reference that the benchmark does not hold, refused."""
        if not len(self._referenced):
            return
        for part in self._referenced.batches():
            given = self._first.get_many([key_of(r.prompt_id, r.model, r.variant) for r in part])
            wanted = [r for r in part if key_of(r.prompt_id, r.model, r.variant) not in given]
            keys = [(r.prompt_id, r.model, r.variant) for r in wanted]
            held = set(self.held(keys)) if self.held is not None and keys else set()
            for reference in wanted:
                if (reference.prompt_id, reference.model, reference.variant) in held:
                    continue
                shown = f", response_variant {reference.variant!r}" if reference.variant else ""
                message = (
                    f"{reference.named} is not given, and the benchmark holds no response of {reference.model!r} "
                    f"to prompt {reference.prompt_id!r}{shown}: give its text."
                )
                self._errors.append((reference.seq, RowError(reference.line, message, self.unit)))

    def _settle(self) -> None:
        """The waiting responses in the file's order: one not seen before is checked and kept. References
        first: a prompt's first row may be one, and carry the prompt's text for the rows after it."""
        self._settle_references()
        pending, self._pending = self._pending, {}
        names = [key_of(*key) for key in pending]
        known = self._first.get_many(names)
        new: dict[str, FirstSight] = {}
        for name, item in zip(names, pending.values(), strict=True):
            seen = known.get(name)
            if seen is None:
                new[name] = seen = FirstSight(item.line, item.digest)
                self.checker.check(item.line, item.response)
            elif item.digest != seen.digest:
                self._differs(item.seq, item.line, item.named, item.key, seen)
            self._remember(item.key, seen)
        self._first.put_many(new.items())

    def _remember(self, key: tuple[str, str, str], seen: FirstSight) -> None:
        if len(self._recent) >= self.CACHE_SIZE:
            self._recent.clear()  # all of it is on disk too, or waiting to be
        self._recent[key] = seen

    def _differs(self, seq: int, line: int, named: str, key: tuple[str, str, str], seen: FirstSight) -> None:
        message = f"{named} of {key[1]!r} differs from the one on {self.unit} {seen.line}."
        self._errors.append((seq, RowError(line, message, self.unit)))

    def finish(self) -> ParsedFile:
        """The prompts and responses, checked as a benchmark file's are."""
        self._settle()
        self._unheld()
        self._first.close()
        self._referenced.close()
        self._recent.clear()
        self.errors = [error for _, error in sorted(self._errors, key=lambda found: found[0])]
        self._errors.clear()
        return self.checker.finish()
