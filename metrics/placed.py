"""Where a model-holding metric computes: one mixin for the metrics that keep ``device`` and ``dtype`` as given.

BERT-LM and the QA metrics keep the user's ``device``/``dtype`` unresolved (``auto`` resolves where the metric runs,
e.g. in a Ray actor that holds a GPU) and resolve them at each use through :meth:`Placed._placement`
(:func:`metrics.device.resolve_device` and :func:`metrics.device.resolve_dtype`).
"""
from __future__ import annotations

from meta_eval.metrics import device as placement

__all__ = ["Placed"]


class Placed:
    """Mixin: ``self.device``/``self.dtype`` as given, resolved by :meth:`_placement`."""

    device: str | None = None
    dtype: str | None = None

    def _placement(self) -> tuple[str, str]:
        """The resolved (device, dtype): ``cpu`` or ``cuda:N``, and the precision (:mod:`metrics.device`)."""
        device = placement.resolve_device(self.device)
        return device, placement.resolve_dtype(self.dtype, device)
