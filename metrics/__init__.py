"""Metric registry and metrics. Importing this package is cheap: metric modules import heavy libraries lazily.

Importing it applies the numeric mode (:mod:`metrics.numeric`) before anything can load torch.

Import it as ``meta_eval.metrics``. The old top-level name ``metrics`` (plugins written as ``from metrics import
Metric, register``) gives this same module (see :mod:`meta_eval._layout`).
"""
if __name__ != "meta_eval.metrics":  # this folder imported by its old top-level name (a source checkout on the path)
    import importlib as _importlib
    import sys as _sys

    _sys.modules[__name__] = _importlib.import_module("meta_eval.metrics")
else:
    from meta_eval.metrics import mkl_vendor as _mkl_vendor
    from meta_eval.metrics import numeric as _numeric

    _mkl_vendor.hold()  # a CPU that is not Intel's: MKL keeps its own branch, said in the signature (mkl_vendor.py)
    try:
        _numeric.prepare()
    except _numeric.NumericModeError:  # a bad $META_EVAL_NUMERIC: reported where it is used (the CLI, a signature)
        pass
    from meta_eval.metrics.base import Example, Metric, MetricError
    from meta_eval.metrics.registry import RegistryError, UnknownMetricError, create, get_class, names, register

    __all__ = ["Example", "Metric", "MetricError", "RegistryError", "UnknownMetricError", "create", "get_class",
               "names", "register"]
