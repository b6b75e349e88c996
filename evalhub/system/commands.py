"""The base of the commands that move data in and out (imports, exports, reports)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any, TypeVar

from django.core.checks import Tags
from django.core.management.base import BaseCommand

from evalhub.system.read_progress import ReadProgress

T = TypeVar("T")


class DataCommand(BaseCommand):
    """A command that reads or writes data: Django's start-up checks are limited to the models. The
    others import every view to check the URLs (2.8 of 4.3 s of `manage.py check` here), which says
    nothing about a file and was the largest part of a small import's time.

    Its progress (bytes read, rows written) is drawn on standard error when that is a terminal, and
    nothing is drawn otherwise (a pipeline's log keeps the summary lines only)."""

    requires_system_checks = [Tags.models]

    def _bar(self, **options: Any) -> Any:
        from tqdm import tqdm  # a command's import, not a web process's

        shown = self.stderr.isatty()
        # tqdm writes to the stream itself: Django's wrapper would end each redraw with a newline.
        return tqdm(file=self.stderr._out, dynamic_ncols=True, disable=not shown, **options)

    @contextmanager
    def reading(self, file: IO[bytes], size: int, label: str) -> Iterator[None]:
        """A bar of how far the block has read `file` (of `size` bytes), then "storing" while the rows
        read are written."""
        with self._bar(total=size, desc=label[:40], unit="B", unit_scale=True, unit_divisor=1024) as bar:

            def moved(read: int) -> None:
                bar.update(min(read, size) - bar.n)
                if read >= size:
                    bar.set_postfix_str("storing", refresh=True)

            with ReadProgress(file, moved, every=0.5):
                yield
            bar.set_postfix_str("done", refresh=False)

    def counting(self, rows: Iterable[T], label: str, total: int | None = None) -> Iterator[T]:
        """`rows`, counted on a bar as they are read (of `total` where the caller knows it; a count of a
        query would read it twice)."""
        with self._bar(desc=label[:40], unit=" rows", total=total) as bar:
            for row in rows:
                yield row
                bar.update()
