"""Progress bars for long work (rich): counts, rate and ETA on stderr."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Iterator

from rich.progress import BarColumn, MofNCompleteColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn, \
    TimeRemainingColumn
from rich.text import Text

from meta_eval.report.escape import terminal_console

__all__ = ["progress_bar", "resampling_progress"]


#: Seconds between two progress lines on stderr when it is not a terminal (for a metric with a progress note)
EVERY = 10.0


class _NoteColumn(ProgressColumn):
    """The metric's own progress note (an LLM judge: requests, requests/s, tokens), asked at every refresh."""

    def __init__(self, note: Callable[[], str | None]) -> None:
        super().__init__()
        self.note = note

    def render(self, task) -> Text:
        return Text(self.note() or "", style="progress.data.speed")


@contextmanager
def progress_bar(label: str, show: bool = True, note: Callable[[], str | None] | None = None
                 ) -> Iterator[Callable[[int, int], None]]:
    """A bar for one task; yields ``advance(done, total)``. Hidden when stderr is not a terminal or ``show`` is
    False.

    ``note`` (a metric's ``progress_note``): text shown after the bar, asked at every refresh (None: nothing yet).
    When stderr is not a terminal (a log, a pipe) and ``show`` is True, a metric with a note gets a plain line
    instead, ``LABEL: DONE/TOTAL rows; NOTE``, every :data:`EVERY` seconds while it runs and once at the end."""
    console = terminal_console(stderr=True)
    terminal = show and console.is_terminal
    columns = [TextColumn("{task.description:>10}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn()] + ([_NoteColumn(note)] if note is not None else [])
    state = {"done": 0, "total": None}
    lines = show and not terminal and note is not None
    stop = threading.Event()

    def line() -> None:
        text = note()
        if text:
            total = "?" if state["total"] is None else state["total"]
            console.print(Text(f"{label}: {state['done']}/{total} rows; {text}"), soft_wrap=True, highlight=False)

    def every() -> None:
        while not stop.wait(EVERY):
            line()

    ticker = threading.Thread(target=every, name="progress-lines", daemon=True) if lines else None
    with Progress(*columns, console=console, transient=False, disable=not terminal) as progress:
        task = progress.add_task(label, total=None)

        def advance(done: int, total: int) -> None:
            state.update(done=done, total=total)
            progress.update(task, completed=done, total=total)

        if ticker is not None:
            ticker.start()
        try:
            yield advance
        finally:
            if ticker is not None:
                stop.set()
                ticker.join()
                line()


@contextmanager
def resampling_progress(show: bool = True) -> Iterator[Callable[[str, int, int], None]]:
    """Bars for resampling (:func:`meta_eval.scoring.chunks.spread`): one per kind of resampling, showing the chunks of
    the current call; yields ``advance(label, done, total)``. Hidden when stderr is not a terminal or ``show`` is
    False."""
    console = terminal_console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("eta"), TimeRemainingColumn(), console=console, transient=True,
                  disable=not (show and console.is_terminal)) as progress:
        tasks: dict[str, int] = {}

        def advance(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = progress.add_task(label, total=total)
            progress.update(tasks[label], completed=done, total=total)

        yield advance
