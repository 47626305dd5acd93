"""The metric base class and the example it scores.

A metric is *batch-first*: :meth:`Metric.score` takes a sequence of :class:`Example` and returns, for each of the
metric's variants, one score per example (ROUGE returns rouge1/rouge2/rougeL x P/R/F in one pass). Scoring must be
side-effect free so that the same object can run in a worker process (for example a Ray task).

Every metric has a *signature* (as in sacrebleu): its name, its configuration and the versions of the libraries and
resources its scores depend on. The signature is printed with every result and keys every cache entry.
"""
from __future__ import annotations

import abc
from dataclasses import dataclass
from importlib import metadata
from typing import ClassVar, Mapping, Sequence

import numpy as np

__all__ = ["Example", "Metric", "MetricError", "package_version", "positive_int"]


class MetricError(ValueError):
    """A metric was given input or configuration it cannot handle."""


@dataclass(frozen=True)
class Example:
    """One text to score.

    Parameters
    ----------
    candidate : str
        The text under evaluation (a system summary, an essay, ...).
    references : tuple of str
        Zero or more human-written references.
    source : str or None
        The source document, for source-based metrics.
    """

    candidate: str
    references: tuple[str, ...] = ()
    source: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.candidate, str):
            raise MetricError(f"candidate must be a string, got {type(self.candidate).__name__}")
        refs = self.references
        if isinstance(refs, str):
            refs = (refs,)
        refs = tuple(refs)
        for ref in refs:
            if not isinstance(ref, str):
                raise MetricError(f"references must be strings, got {type(ref).__name__}")
        object.__setattr__(self, "references", refs)
        if self.source is not None and not isinstance(self.source, str):
            raise MetricError(f"source must be a string or None, got {type(self.source).__name__}")


def positive_int(value: object, what: str) -> int:
    """``value`` as a positive int (command-line options arrive as strings), else :class:`MetricError`."""
    if isinstance(value, bool):
        raise MetricError(f"{what} must be a positive integer, got {value!r}")
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise MetricError(f"{what} must be a positive integer, got {value!r}") from None
    if number < 1 or (isinstance(value, float) and value != number):
        raise MetricError(f"{what} must be a positive integer, got {value!r}")
    return number


def package_version(dist: str) -> str:
    """Installed version of distribution ``dist``, or ``"missing"``."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "missing"


class Metric(abc.ABC):
    """Base class of every metric.

    Subclasses set the class attributes below, implement :meth:`_score` and :meth:`config`, and are registered with
    :func:`metrics.registry.register`.

    Class attributes
    ----------------
    name : str
        Registry name (set by the ``register`` decorator).
    variants : tuple of str
        Names of the scores returned for each example, as printed in results.
    needs_references, needs_source : bool
        What the metric reads from an :class:`Example`.
    higher_is_better : bool
        Orientation; statistics flip metrics where lower is better.
    requires : tuple of str
        Python modules that must be importable (optional extras); checked by :meth:`unavailable_reason`.
    install_hint : str
        The command that installs what ``requires`` lists.
    libraries : tuple of str
        Distributions whose versions enter the signature.
    """

    name: ClassVar[str] = ""
    variants: ClassVar[tuple[str, ...]] = ()
    needs_references: ClassVar[bool] = True
    needs_source: ClassVar[bool] = False
    higher_is_better: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ()
    install_hint: ClassVar[str] = ""
    libraries: ClassVar[tuple[str, ...]] = ()

    # -- description -------------------------------------------------------------------------------------------
    def config(self) -> Mapping[str, object]:
        """The settings that change this metric's scores (part of the signature)."""
        return {}

    def versions(self) -> dict[str, str]:
        """Versions of the libraries the scores depend on (part of the signature)."""
        out = {dist: package_version(dist) for dist in self.libraries}
        out["meta-eval"] = package_version("meta-eval")
        return out

    def signature(self) -> str:
        """sacrebleu-style signature: ``name|key:value|...|lib==version``."""
        parts = [self.name]
        parts += [f"{k}:{v}" for k, v in self.config().items()]
        parts += [f"{k}=={v}" for k, v in self.versions().items()]
        return "|".join(parts)

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """``None`` if the metric can run here, else why not and how to fix it."""
        import importlib.util

        missing = [mod for mod in cls.requires if importlib.util.find_spec(mod) is None]
        if missing:
            return f"missing {', '.join(missing)}: {cls.install_hint or 'install it'}"
        return None

    # -- scoring -----------------------------------------------------------------------------------------------
    def score(self, examples: Sequence[Example]) -> dict[str, np.ndarray]:
        """Score a batch.

        Returns
        -------
        dict of str to ndarray
            For every name in :attr:`variants`, a float64 array with one finite score per example.
        """
        examples = list(examples)
        for i, ex in enumerate(examples):
            if not isinstance(ex, Example):
                raise MetricError(f"example {i} is a {type(ex).__name__}, not a metrics.Example")
            if self.needs_references and not ex.references:
                raise MetricError(f"{self.name}: example {i} has no reference, and this metric needs one")
            if self.needs_source and not ex.source:
                raise MetricError(f"{self.name}: example {i} has no source, and this metric needs one")
        if not examples:
            return {v: np.zeros(0) for v in self.variants}
        out = self._score(examples)
        if set(out) != set(self.variants):
            raise RuntimeError(f"{self.name} returned variants {sorted(out)}, declared {list(self.variants)}")
        result = {}
        for variant in self.variants:
            arr = np.asarray(out[variant], dtype=np.float64)
            if arr.shape != (len(examples),):
                raise RuntimeError(f"{self.name}/{variant}: {arr.shape} scores for {len(examples)} examples")
            if not np.all(np.isfinite(arr)):
                bad = int(np.flatnonzero(~np.isfinite(arr))[0])
                raise RuntimeError(f"{self.name}/{variant}: non-finite score for example {bad}")
            result[variant] = arr
        return result

    @abc.abstractmethod
    def _score(self, examples: list[Example]) -> Mapping[str, Sequence[float]]:
        """Compute the scores of a validated, non-empty batch."""

    def __repr__(self) -> str:
        cfg = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"{type(self).__name__}({cfg})"

