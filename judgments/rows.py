"""Quick trials: a judgment set's (or a list of texts') first N rows, or a seeded sample of N of them.

The one place where ``--limit N`` and ``--sample N --seed S`` choose rows, for ``meta-eval run``, ``probe`` and
``score`` (and their library calls :func:`meta_eval.task.run`, :func:`meta_eval.probe.run.probe`,
:func:`meta_eval.task.score`):

- ``--limit N`` keeps the first N rows in file order (the set's row order after ``--subset``). Rows, not documents:
  N rows may end inside a document, whose remaining rows are then left out (a summary-level run sees that document
  with fewer systems; a document needs 3 or more systems there, as always).
- ``--sample N`` keeps N rows drawn without replacement by ``numpy.random.default_rng(seed)`` (``seed``: the
  command's ``--seed``, default 0), kept in file order. Rows too, not documents.
- N must be a whole number of at least 1 (else a :class:`~meta_eval.errors.MetaEvalError`); ``--limit`` and
  ``--sample`` exclude each other. An N at or over the number of rows keeps every row: a note, not an error.

The selection is made before anything else looks at the rows (human scores, duplicates, imported scores: a
``--scores`` file for the whole set joins, its lines for rows left out are ignored), and it is recorded: the
printed line ``48 of 2085 rows (--limit 48)`` and the ``"rows"`` object of the JSON output
(:meth:`RowChoice.as_dict`). The metrics' signatures do not change: the same metric scores a row the same way.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from meta_eval.errors import MetaEvalError

__all__ = ["MIN_RESAMPLES", "RowChoice", "check_choice", "check_resamples", "check_seed", "choose", "select_rows"]

#: the fewest resamples a command takes (``--resamples`` of run and probe, run's ``--permutations``)
MIN_RESAMPLES = 10


@dataclass(frozen=True)
class RowChoice:
    """Which rows a quick trial kept: ``positions`` (in file order) of the ``total`` rows, and how."""

    limit: int | None
    sample: int | None
    seed: int | None
    total: int
    positions: tuple[int, ...]

    @property
    def kept(self) -> int:
        return len(self.positions)

    @property
    def flag(self) -> str:
        return f"--limit {self.limit}" if self.limit is not None else f"--sample {self.sample} --seed {self.seed}"

    def line(self) -> str:
        """The printed line: ``48 of 2085 rows (--limit 48)``; a note when N covers every row."""
        n = self.limit if self.limit is not None else self.sample
        if n >= self.total:
            return f"{self.kept} of {self.total} rows ({self.flag}: the set has {self.total} rows, all are kept)"
        return f"{self.kept} of {self.total} rows ({self.flag})"

    def among(self) -> str:
        """What a count of the kept rows is among, for a message (empty when every row is kept).

        >>> RowChoice(3, None, None, 20, (0, 1, 2)).among()
        ' (among the 3 rows that --limit 3 keeps of 20)'
        """
        if self.kept >= self.total:
            return ""
        return f" (among the {self.kept} rows that {self.flag} keeps of {self.total})"

    def as_dict(self) -> dict:
        """The ``"rows"`` object of a command's JSON output."""
        return {"limit": self.limit, "sample": self.sample, "seed": self.seed, "of": self.total, "kept": self.kept}


def _count(value, option: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise MetaEvalError(f"{option} must be a whole number of rows (1 or more), not {value!r}")
    if value < 1:
        raise MetaEvalError(f"{option} must be 1 or more rows, not {value}")
    return value


def check_choice(limit=None, sample=None, seed=None) -> None:
    """Raise :class:`~meta_eval.errors.MetaEvalError` for a bad ``--limit``/``--sample`` (not a whole number, under
    1, both given) or ``--seed`` (the seed of the sample and of every resampling: a whole number from 0, as numpy's
    generators take; None: not given) before any loading."""
    if _count(limit, "--limit") is not None and _count(sample, "--sample") is not None:
        raise MetaEvalError("give --limit N (the first N rows) or --sample N (a seeded sample), not both")
    _count(sample, "--sample")
    check_seed(seed)


def check_seed(seed, option: str = "--seed") -> None:
    """Raise :class:`~meta_eval.errors.MetaEvalError` unless ``seed`` is None or a whole number from 0 (numpy's
    generators take no negative seed), naming ``option``: a sentence before any work, not numpy's error after it."""
    import numbers

    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0):
        raise MetaEvalError(f"{option} must be a whole number from 0, not {seed!r}")


def check_resamples(resamples, option: str = "--resamples") -> None:
    """Raise :class:`~meta_eval.errors.MetaEvalError` unless ``resamples`` is a whole number of at least
    :data:`MIN_RESAMPLES`, as the command line requires (``run(..., resamples=1)`` gave an interval of one draw)."""
    import numbers

    if isinstance(resamples, bool) or not isinstance(resamples, numbers.Integral) or resamples < MIN_RESAMPLES:
        raise MetaEvalError(f"{option} must be a whole number >= {MIN_RESAMPLES}, not {resamples!r}")


def choose(total: int, limit=None, sample=None, seed=0) -> RowChoice | None:
    """The rows to keep of ``total`` (None: neither ``limit`` nor ``sample`` was given, every row is kept)."""
    check_choice(limit, sample, seed)
    if limit is None and sample is None:
        return None
    if limit is not None:
        return RowChoice(limit, None, None, total, tuple(range(min(limit, total))))
    if sample >= total:
        return RowChoice(None, sample, seed, total, tuple(range(total)))
    import numpy as np

    drawn = np.random.default_rng(seed).choice(total, size=sample, replace=False)
    return RowChoice(None, sample, seed, total, tuple(sorted(int(i) for i in drawn)))


def select_rows(jset, limit=None, sample=None, seed=0):
    """``(jset with the chosen rows, RowChoice or None)``: :func:`choose` over a
    :class:`~judgments.base.JudgmentSet`'s rows (or over a list, e.g. ``meta-eval score``'s examples)."""
    rows = jset.rows if hasattr(jset, "rows") else jset
    choice = choose(len(rows), limit, sample, seed)
    if choice is None:
        return jset, None
    kept = [rows[i] for i in choice.positions]
    if not hasattr(jset, "rows"):
        return _labelled(jset, kept, choice), choice
    return replace(jset, rows=kept), choice


def _labelled(examples, kept, choice):
    from meta_eval.judgments.base import LabelledExamples

    if isinstance(examples, LabelledExamples):
        return LabelledExamples(kept, [examples.labels[i] for i in choice.positions])
    return list(kept)
