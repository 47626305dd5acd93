"""Metric registry and metrics. Importing this package is cheap: metric modules import heavy libraries lazily."""
from metrics.base import Example, Metric, MetricError
from metrics.registry import RegistryError, UnknownMetricError, create, get_class, names, register

__all__ = ["Example", "Metric", "MetricError", "RegistryError", "UnknownMetricError", "create", "get_class", "names",
           "register"]
