"""Metric registry and metrics. Importing this package is cheap: metric modules import heavy libraries lazily.

Importing it applies the numeric mode (:mod:`metrics.numeric`) before anything can load torch.
"""
from metrics import numeric as _numeric

try:
    _numeric.prepare()
except _numeric.NumericModeError:  # a bad $META_EVAL_NUMERIC: reported where the mode is used (the CLI, a signature)
    pass
from metrics.base import Example, Metric, MetricError
from metrics.registry import RegistryError, UnknownMetricError, create, get_class, names, register

__all__ = ["Example", "Metric", "MetricError", "RegistryError", "UnknownMetricError", "create", "get_class", "names",
           "register"]
