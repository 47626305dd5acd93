"""An :class:`~metrics.base.Example` that also carries the judged instance's named fields.

:class:`~metrics.base.Example` (candidate, references, source) is frozen by the signatures of the committed boards
(its module's bytes are in them), so the fields of a JUDGE-BENCH instance (``user_prompt``/``response``,
``input``/``output_a``/``output_b``, or ``instance`` for a string instance) travel in a subclass:
:meth:`judgments.base.Judgment.example` returns an :class:`Instance` for a row that has fields and a plain
:class:`~metrics.base.Example` for every other row, so the sets without fields score and cache exactly as before.

An :class:`Instance` is an :class:`~metrics.base.Example` for every metric (``isinstance`` holds, the three texts
are the same); a metric that reads more (the LLM judge's ``template=set``, whose prompt is a jinja template over the
fields) asks :meth:`Instance.field` or :meth:`Instance.field_map`. The fields are part of equality, of the hash and of
:func:`meta_eval.scoring.cache.example_key`, so two rows with the same candidate but another second output never
share a cached score. Pickling (worker processes, Ray) and :func:`copy.copy` (the runner's per-metric copies) keep
the class and its fields.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from meta_eval.metrics.base import Example, MetricError

__all__ = ["Instance", "fields_of"]


@dataclass(frozen=True)
class Instance(Example):
    """An :class:`~metrics.base.Example` with the judged instance's named fields.

    Parameters
    ----------
    candidate, references, source
        As in :class:`~metrics.base.Example`.
    fields : tuple of (str, str) pairs
        The instance's named fields, sorted by name (a mapping or any iterable of pairs is accepted and stored so);
        names are unique non-empty strings, values strings.
    """

    fields: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        super().__post_init__()
        given = self.fields
        pairs = list(given.items()) if isinstance(given, Mapping) else list(given)
        for pair in pairs:
            if (not isinstance(pair, tuple) or len(pair) != 2 or not isinstance(pair[0], str) or not pair[0]
                    or not isinstance(pair[1], str)):
                raise MetricError(f"the fields of an Instance are (name, text) pairs of strings, got {pair!r}")
        names = [name for name, _ in pairs]
        if len(set(names)) != len(names):
            raise MetricError(f"the fields of an Instance must have distinct names, got {', '.join(names)}")
        object.__setattr__(self, "fields", tuple(sorted(pairs)))

    def field_map(self) -> dict[str, str]:
        """The fields as a dict (name -> text), in name order."""
        return dict(self.fields)

    def field(self, name: str) -> str:
        """The text of field ``name``; a :class:`~metrics.base.MetricError` naming the fields it has if none."""
        for key, value in self.fields:
            if key == name:
                return value
        raise MetricError(f"the instance has no field {name!r} (its fields: "
                          f"{', '.join(k for k, _ in self.fields) or 'none'})")


def fields_of(example: Example) -> dict[str, str]:
    """The named fields of ``example``: an :class:`Instance`'s, else none (``{}``)."""
    return example.field_map() if isinstance(example, Instance) else {}
