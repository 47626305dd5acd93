"""The learned-model file: what ``meta-eval learn --save`` writes and ``learned:<model>`` reads.

This module is the format only (the dataclasses, JSON save/load and validation), so both sides import it without
a layering back-edge: :mod:`meta_eval.learning.ridge` (which fits the model, following Scialom et al., EMNLP 2019, sec.
2.4)
writes it, and :mod:`metrics.learned` (the metric family) reads it. Nothing here imports :mod:`meta_eval`.

The file is JSON with ``"format": "meta-eval-learned-model"`` and ``"schema": 1``:

- ``features`` (variant names, in column order), ``components`` (registry name, constructor options, signature at
  fitting time and the variants each feeds), ``scaler`` (``means``, ``stds``), ``weights`` (standardised scale),
  ``intercept``, ``alpha``, ``n`` (rows fitted on), ``documents``, ``heldout`` (the held-out correlations), plus the
  redundant ``raw`` weights for readers; ``meta_eval_version`` and ``created``.
- **What it was fitted on**, so a run on the same rows can be flagged as in-sample (:mod:`metrics.learned`):
  ``judgments`` (set name; the file stem for a JSONL file), ``subset``, ``target`` (the human dimension or
  ``geomean:...`` spec) and ``rows``: the sorted :func:`row_fingerprint` of every row fitted on.
- **What made it**: ``provenance``, the object every result of a command records
  (:func:`meta_eval.provenance.record`): the ``command`` line (``null`` from a library call), meta-eval's
  ``version`` and the ``inputs`` it read, each with its SHA-256 (the judgment file, or a built-in set's pinned data
  files; ``--plugin`` files; ``-o KEY=FILE`` files).

Reading older files: every field of the second and third groups is optional. A missing ``judgments``, ``subset``
or ``target`` loads as ``None`` (*unknown*), a missing ``rows`` as ``None`` (then only the set name can tell
whether a run is in-sample), and a missing ``provenance`` as ``None``. The schema number stays 1 because these
additions are optional; a file with another schema number is refused with a message saying to refit.

Choices: ``rows`` holds 12 hex digits (48 bits) of the SHA-256 of each row's scored inputs (candidate, references,
source), so the file stays small (about 16 bytes a row) and never contains the texts; two different rows collide
with probability about ``n_fit * n_run / 2**48`` (below 1e-6 for sets of 10,000 rows).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

__all__ = ["MODEL_FORMAT", "MODEL_SCHEMA", "Component", "LearnedModel", "LearnedModelError", "row_fingerprint",
           "row_fingerprints"]

MODEL_FORMAT = "meta-eval-learned-model"
MODEL_SCHEMA = 1
_FINGERPRINT_HEX = 12


#: Decimals a feature is rounded to before a ridge model sees it (fitting and scoring alike).
FEATURE_DECIMALS = 12


def canonical_features(x) -> np.ndarray:
    """Feature scores as every ridge fit and prediction takes them: float64, rounded to :data:`FEATURE_DECIMALS`
    decimals (at most 5e-13 moved).

    Metrics compute some mathematically equal scores in different orders: ROUGE's F of (P, R) and of (R, P) can
    differ in the last bit (chaganty's rougeL-f holds 330 such pairs, 1.4e-17 apart). A model's prediction
    ``w * (x - mean)`` then merges or separates such a pair depending on ``w``, so rank correlations of a
    one-feature model moved by 1e-5 from one alpha to the next, and the inner cross-validation chose alpha by that
    noise instead of keeping the paper's on a tie (:func:`meta_eval.learning.nested.tie_rank`). Rounded, equal
    scores are the same number, and equal numbers give equal predictions for every alpha.

    >>> def f1(overlap, n_candidate, n_reference):  # ROUGE-N's F: 1 of 1 and 5 words, 1 of 2 and 4, both 1/3
    ...     p, r = overlap / n_candidate, overlap / n_reference
    ...     return 2 * p * r / (p + r)
    >>> a, b = f1(1, 1, 5), f1(1, 2, 4)
    >>> bool(a == b), bool(canonical_features(a) == canonical_features(b))
    (False, True)
    """
    return np.round(np.asarray(x, dtype=np.float64), FEATURE_DECIMALS)


def _is_model_file(path: Path) -> bool:
    """Whether ``path`` holds a learned-model file (JSON whose ``format`` is :data:`MODEL_FORMAT`)."""
    try:
        with open(path, "rb") as fh:
            doc = json.loads(fh.read(1 << 26))
    except (OSError, ValueError):
        return False
    return isinstance(doc, dict) and doc.get("format") == MODEL_FORMAT


class LearnedModelError(ValueError):
    """A learned-model file is missing, corrupt, or does not follow the schema."""


def row_fingerprint(example: Any) -> str:
    """12 hex digits of the SHA-256 of an example's scored inputs: candidate, references (in order) and source.

    ``example`` is a :class:`metrics.base.Example` (anything with ``candidate``, ``references`` and ``source``).
    """
    payload = json.dumps([example.candidate, list(example.references), example.source], ensure_ascii=False)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:_FINGERPRINT_HEX]


def row_fingerprints(examples: Iterable[Any]) -> list[str]:
    """The sorted, distinct :func:`row_fingerprint` of ``examples`` (what a model file's ``rows`` holds)."""
    return sorted({row_fingerprint(e) for e in examples})


@dataclass(frozen=True)
class Component:
    """A metric whose variants feed a learned model.

    Attributes
    ----------
    name : str
        Registry name (``metrics.create(name, **options)`` re-creates it).
    options : mapping of str to str, int, float or bool
        Constructor arguments it was created with.
    signature : str
        Its signature when the model was learned (a different one now means its scores may differ).
    variants : tuple of str
        Its variants that are features of the model.
    """

    name: str
    options: Mapping[str, Any]
    signature: str
    variants: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "options": dict(self.options), "signature": self.signature,
                "variants": list(self.variants)}


def _version() -> str:
    from meta_eval.metrics.base import package_version

    return package_version("meta-eval")


@dataclass
class LearnedModel:
    """A ridge model from metric scores to a human target, fitted on all rows of a judgment set.

    ``predict(x) = ((x - means) / stds) @ weights + intercept`` with x the feature columns in :attr:`features`
    order. Saved as JSON (see the module notes).

    Attributes
    ----------
    features : list of str
        Metric variant names, in column order.
    components : list of Component
        The metrics producing the features, with their options and signatures.
    means, stds, weights : list of float
        Scaler means and scales, standardised-scale ridge weights.
    intercept, alpha : float
    target : str or None
        Target spec (see :func:`meta_eval.learning.ridge.target_values`); None: unknown (an older file without it).
    judgments, subset : str or None
        The judgment set and subset it was fitted on; None: unknown (an older file without them).
    n, documents : int
        Rows and documents it was fitted on.
    heldout : dict
        :meth:`meta_eval.learning.ridge.RidgeResult.as_dict` of the same features (held-out correlations).
    rows : list of str or None
        Sorted :func:`row_fingerprint` of the rows fitted on; None: unknown (an older file without them).
    provenance : dict or None
        The command line, meta-eval's version and the SHA-256 of every input of the ``learn`` that fitted it
        (:func:`meta_eval.provenance.record`); None: not recorded (an older file, or a model built by hand).
    meta_eval_version, created : str
    sha256 : str
        SHA-256 of the file it was loaded from or saved to ("" before); not part of the file.
    """

    features: list[str]
    components: list[Component]
    means: list[float]
    stds: list[float]
    weights: list[float]
    intercept: float
    alpha: float
    target: str | None
    judgments: str | None
    subset: str | None
    n: int
    documents: int
    heldout: dict[str, Any]
    rows: list[str] | None = None
    provenance: dict[str, Any] | None = None
    meta_eval_version: str = field(default_factory=_version)
    created: str = field(default_factory=lambda: _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"))
    sha256: str = field(default="", compare=False)

    @property
    def raw_weights(self) -> list[float]:
        """Weights on the raw score scale: ``weights / stds``."""
        return [w / s for w, s in zip(self.weights, self.stds)]

    @property
    def raw_intercept(self) -> float:
        return self.intercept - sum(w / s * m for w, s, m in zip(self.weights, self.stds, self.means))

    @property
    def fitted_on(self) -> str:
        """``<set>/<subset>`` it was fitted on, with ``unknown`` for a part an older file does not record."""
        return f"{self.judgments or 'unknown'}/{self.subset or 'unknown'}"

    def predict(self, x) -> np.ndarray:
        """Predictions for a feature matrix (n, k) or a mapping of feature name -> scores."""
        if isinstance(x, Mapping):
            missing = [f for f in self.features if f not in x]
            if missing:
                raise ValueError(f"missing feature(s) {', '.join(missing)}")
            x = np.column_stack([np.asarray(x[f], dtype=np.float64) for f in self.features])
        x = canonical_features(x)  # as the model was fitted
        if x.ndim != 2 or x.shape[1] != len(self.features):
            raise ValueError(f"need an (n, {len(self.features)}) feature matrix, got shape {x.shape}")
        return (x - np.asarray(self.means)) / np.asarray(self.stds) @ np.asarray(self.weights) + self.intercept

    def as_dict(self) -> dict[str, Any]:
        doc = {"format": MODEL_FORMAT, "schema": MODEL_SCHEMA, "meta_eval_version": self.meta_eval_version,
               "created": self.created, "judgments": self.judgments, "subset": self.subset, "target": self.target,
               "n": self.n, "documents": self.documents, "alpha": self.alpha, "features": list(self.features),
               "components": [c.as_dict() for c in self.components], "scaler": {"means": list(self.means),
                                                                                "stds": list(self.stds)},
               "weights": list(self.weights), "intercept": self.intercept,
               "raw": {"weights": self.raw_weights, "intercept": self.raw_intercept}, "heldout": self.heldout}
        if self.provenance is not None:
            doc["provenance"] = dict(self.provenance)
        if self.rows is not None:  # last: the long list stays out of the way of a reader of the file
            doc["rows"] = list(self.rows)
        return doc

    def to_bytes(self) -> bytes:
        """The file's bytes: :meth:`as_dict` as indented JSON (UTF-8, a final newline)."""
        return (json.dumps(self.as_dict(), indent=2) + "\n").encode("utf-8")

    def save(self, path: str | Path, overwrite: bool = False) -> Path:
        """Write the model as JSON, atomically (a temporary file in the same folder, then renamed). ``meta-eval learn
        --save`` writes through meta-eval's one write path instead
        (:func:`meta_eval.learning.pipeline.save_model`); the bytes are the same (:meth:`to_bytes`).

        As that path, it never replaces a file meta-eval did not write: an existing ``path`` is replaced only if it
        is a learned-model file (its ``format`` is :data:`MODEL_FORMAT`), or with ``overwrite=True``; otherwise
        :class:`FileExistsError` naming it, and the file is left as it was."""
        path = Path(path).expanduser()
        if path.is_dir():
            raise IsADirectoryError(f"{path} is a folder, not a model file")
        if path.exists() and not overwrite and not _is_model_file(path):
            raise FileExistsError(f"{path} exists and is not a meta-eval learned-model file (format "
                                  f"{MODEL_FORMAT!r}): not replaced; pass overwrite=True to replace it")
        path.parent.mkdir(parents=True, exist_ok=True)
        data = self.to_bytes()
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            tmp.write_bytes(data)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        self.sha256 = hashlib.sha256(data).hexdigest()
        return path

    @classmethod
    def load(cls, path: str | Path) -> LearnedModel:
        """Read and validate a saved model.

        Raises
        ------
        LearnedModelError
            If the file is missing, not JSON, or does not follow the schema (the message says what is wrong).
        """
        path = Path(path).expanduser()
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise LearnedModelError(f"learned model file {path} does not exist") from None
        except OSError as exc:
            raise LearnedModelError(f"cannot read learned model {path}: {exc}") from None
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # ValueError: also an integer of 4,300+ digits
            raise LearnedModelError(f"learned model {path} is not valid JSON ({str(exc)[:200]}); it is corrupt or "
                                    "truncated: re-create it with `meta-eval learn ... --save`") from None
        try:
            model = cls.from_dict(doc)
        except LearnedModelError as exc:
            raise LearnedModelError(f"learned model {path}: {exc}") from None
        model.sha256 = hashlib.sha256(data).hexdigest()
        return model

    @classmethod
    def from_dict(cls, doc: Any) -> LearnedModel:
        """Validate a parsed model document (see :meth:`load`; missing optional fields load as None)."""
        if not isinstance(doc, dict):
            raise LearnedModelError(f"expected a JSON object, got {type(doc).__name__}")
        if doc.get("format") != MODEL_FORMAT:
            raise LearnedModelError(f"not a meta-eval learned model (format is {doc.get('format')!r}, expected "
                                    f"{MODEL_FORMAT!r})")
        schema = _need(doc, "schema", int)
        if schema != MODEL_SCHEMA:
            raise LearnedModelError(f"schema {schema} is not supported (this meta-eval reads schema {MODEL_SCHEMA}); "
                                    "re-create the model with this version's `meta-eval learn`")
        features = _need(doc, "features", list)
        if not features or not all(isinstance(f, str) and f for f in features) or len(set(features)) != len(features):
            raise LearnedModelError("'features' should be a non-empty list of distinct variant names")
        scaler = _need(doc, "scaler", dict)
        means, stds = _numbers(scaler, "means", "scaler"), _numbers(scaler, "stds", "scaler")
        weights = _numbers(doc, "weights")
        for key, vals in (("scaler.means", means), ("scaler.stds", stds), ("weights", weights)):
            if len(vals) != len(features):
                raise LearnedModelError(f"{key} has {len(vals)} values for {len(features)} features")
        if not all(s > 0 for s in stds):
            raise LearnedModelError("scaler.stds must all be > 0")
        intercept = _need(doc, "intercept", (int, float))
        alpha = _need(doc, "alpha", (int, float))
        if not (math.isfinite(intercept) and math.isfinite(alpha) and alpha >= 0):
            raise LearnedModelError("'intercept' must be finite and 'alpha' finite and >= 0")
        components = _components(_need(doc, "components", list), features)
        heldout = doc.get("heldout", {})
        if not isinstance(heldout, dict):
            raise LearnedModelError("'heldout' should be an object")
        rows = doc.get("rows")
        if rows is not None and not (isinstance(rows, list) and all(isinstance(r, str) and r for r in rows)):
            raise LearnedModelError("'rows' should be a list of row fingerprints (strings)")
        documents = doc.get("documents", 0)
        provenance = doc.get("provenance")
        if provenance is not None and not isinstance(provenance, dict):
            raise LearnedModelError(f"'provenance' should be an object, got {type(provenance).__name__}")
        return cls(features=list(features), components=components, means=means, stds=stds, weights=weights,
                   intercept=float(intercept), alpha=float(alpha), target=_optional_str(doc, "target"),
                   judgments=_optional_str(doc, "judgments"), subset=_optional_str(doc, "subset"),
                   n=_need(doc, "n", int), documents=int(documents) if isinstance(documents, int) else 0,
                   heldout=heldout, rows=None if rows is None else list(rows), provenance=provenance,
                   meta_eval_version=str(doc.get("meta_eval_version", "")), created=str(doc.get("created", "")))


def _components(raw: list, features: list[str]) -> list[Component]:
    """Validate ``components``: every feature comes from exactly one component, every variant is a feature."""
    components = []
    for i, c in enumerate(raw):
        where = f"components[{i}]"
        name = _need(c, "name", str, where)
        options = _need(c, "options", dict, where)
        if not all(isinstance(v, (str, int, float, bool)) for v in options.values()):
            raise LearnedModelError(f"{where}.options values must be strings, numbers or booleans")
        signature = _need(c, "signature", str, where)
        variants = _need(c, "variants", list, where)
        if not variants or not all(isinstance(v, str) for v in variants):
            raise LearnedModelError(f"{where}.variants should be a non-empty list of variant names")
        components.append(Component(name, dict(options), signature, tuple(variants)))
    owners: dict[str, str] = {}
    for c in components:
        for v in c.variants:
            if v in owners:
                raise LearnedModelError(f"variant {v!r} is claimed by both {owners[v]} and {c.name}")
            owners[v] = c.name
    orphans = [f for f in features if f not in owners]
    if orphans:
        raise LearnedModelError(f"feature(s) {', '.join(orphans)} come from no listed component")
    unused = [v for v in owners if v not in features]
    if unused:
        raise LearnedModelError(f"component variant(s) {', '.join(unused)} are not features of the model")
    return components


def _need(obj: Any, key: str, types, where: str = "model") -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise LearnedModelError(f"{where} has no {key!r} field")
    val = obj[key]
    if not isinstance(val, types) or (isinstance(val, bool) and bool not in _astuple(types)):
        raise LearnedModelError(f"{where} field {key!r} should be {_typename(types)}, got {type(val).__name__}")
    return val


def _numbers(obj: Any, key: str, where: str = "model") -> list[float]:
    vals = _need(obj, key, list, where)
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in vals):
        raise LearnedModelError(f"{where} field {key!r} should be a list of finite numbers")
    return [float(v) for v in vals]


def _optional_str(doc: dict, key: str) -> str | None:
    """A string field that older files may lack (None: unknown); any other type is an error."""
    val = doc.get(key)
    if val is not None and not isinstance(val, str):
        raise LearnedModelError(f"model field {key!r} should be a string, got {type(val).__name__}")
    return val


def _astuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def _typename(types) -> str:
    names = {list: "a list", dict: "an object", str: "a string", int: "an integer", float: "a number"}
    return " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in _astuple(types)))
