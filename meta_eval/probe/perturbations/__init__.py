"""The perturbations of ``meta-eval probe``, registered by name (:data:`PERTURBATIONS`), in families:

- ``fluency`` (:mod:`.fluency`), ``order`` (:mod:`.order`), ``content`` (:mod:`.content`): errors a metric should
  catch (its score should drop);
- ``invariance`` (:mod:`.invariance`): changes a metric should *not* punish (a drop is a false alarm).

Importing this package registers every built-in perturbation.
"""
from meta_eval.probe.perturbations.base import (FAMILIES, PERTURBATIONS, MissingExtraError, Perturbation, get,
                                               perturbation_rng, register)
# importing registers them; the order of the imports is the order of PERTURBATIONS: by family
from meta_eval.probe.perturbations import fluency  # noqa: E402  isort:skip
from meta_eval.probe.perturbations import order  # noqa: E402  isort:skip
from meta_eval.probe.perturbations import content  # noqa: E402  isort:skip
from meta_eval.probe.perturbations import invariance  # noqa: E402  isort:skip

__all__ = ["FAMILIES", "PERTURBATIONS", "MissingExtraError", "Perturbation", "content", "fluency", "get", "invariance",
           "order", "perturbation_rng", "register"]
