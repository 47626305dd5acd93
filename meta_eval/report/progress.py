"""Progress bars for long work (rich): counts, rate and ETA on stderr."""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, \
    TimeRemainingColumn

__all__ = ["progress_bar", "resampling_progress"]


@contextmanager
def progress_bar(label: str, show: bool = True) -> Iterator[Callable[[int, int], None]]:
    """A bar for one task; yields ``advance(done, total)``. Hidden when stderr is not a terminal or ``show`` is
    False."""
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description:>10}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("eta"), TimeRemainingColumn(), console=console, transient=False,
                  disable=not (show and console.is_terminal)) as progress:
        task = progress.add_task(label, total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)

        yield advance


@contextmanager
def resampling_progress(show: bool = True) -> Iterator[Callable[[str, int, int], None]]:
    """Bars for resampling (:func:`meta_eval.scoring.chunks.spread`): one per kind of resampling, showing the chunks of
    the current call; yields ``advance(label, done, total)``. Hidden when stderr is not a terminal or ``show`` is
    False."""
    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("eta"), TimeRemainingColumn(), console=console, transient=True,
                  disable=not (show and console.is_terminal)) as progress:
        tasks: dict[str, int] = {}

        def advance(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = progress.add_task(label, total=total)
            progress.update(tasks[label], completed=done, total=total)

        yield advance
