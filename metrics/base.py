"""The metric base class and the example it scores.

A metric is *batch-first*: :meth:`Metric.score` takes a sequence of :class:`Example` and returns, for each of the
metric's variants, one score per example (ROUGE returns rouge1/rouge2/rougeL x P/R/F in one pass). Scoring must be
side-effect free so that the same object can run in a worker process (for example a Ray task).

Every metric has a *signature* (as in sacrebleu): its name, its configuration, the versions of the libraries and
resources its scores depend on, and a digest of its own code (:mod:`metrics.code_digest`). The signature is printed
with every result and keys every cache entry.
"""
from __future__ import annotations

import abc
import hashlib
import os
from dataclasses import dataclass
from importlib import metadata
from typing import ClassVar, Mapping, Sequence

import numpy as np

__all__ = ["REFS_POLICIES", "Example", "Metric", "MetricError", "NonFiniteScore", "boolean", "choice",
           "package_version", "positive_int"]

#: Multi-reference policies every reference-based metric accepts (``--option refs=...``); see :meth:`Metric.with_refs`.
REFS_POLICIES = ("max", "mean", "first", "jackknife")


class MetricError(ValueError):
    """A metric was given input or configuration it cannot handle."""


class NonFiniteScore(RuntimeError):
    """A metric returned NaN or an infinity for an example: ``variant``, the ``value``, the ``index`` in the batch and
    the ``example`` itself, so that :func:`meta_eval.scoring.runner.score_examples` names its row (file and line)
    whatever the batch (picklable with its fields: the error of a worker process reaches the driver whole)."""

    def __init__(self, message: str, variant: str, value: float, index: int, example: "Example | None" = None):
        super().__init__(message)
        self.variant, self.value, self.index, self.example = variant, value, index, example

    def __reduce__(self):
        return type(self), (self.args[0], self.variant, self.value, self.index, self.example)


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


_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def choice(value: object, allowed, what: str) -> str:
    """``value`` if it is one of ``allowed`` (a sequence or the keys of a mapping), else :class:`MetricError`."""
    if value not in allowed:
        raise MetricError(f"unknown {what} {value!r}; choose one of {', '.join(allowed)}")
    return value


def boolean(value: object, what: str) -> bool:
    """``value`` as a bool (command-line options arrive as strings), else :class:`MetricError`.

    Accepts a bool, the ints 0 and 1, and (case-insensitive, surrounding blanks ignored) ``true/false``, ``1/0``,
    ``yes/no``, ``on/off``. Anything else (``"maybe"``, ``""``, ``2``) is an error, never silently true.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise MetricError(f"{what} must be a boolean ({', '.join(f'{t}/{f}' for t, f in zip(_TRUE, _FALSE))}), "
                      f"got {value!r}")


#: file_sha256's memo: (real path, size, mtime_ns, inode) -> hex digest; a file replaced or edited in place is read
#: again, an unchanged one (a 1.3 GB model's weights, signed on every config() call) is read once per process
_SHA256_MEMO: dict[tuple[str, int, int, int], str] = {}


def file_sha256(path) -> str:
    """SHA-256 (hex) of a file's bytes, read in 4 MiB chunks (model weights, corpora, baseline files, vectors files).

    Memoised per process by the file's real path, size, modification time (ns) and inode, so a file that changes on
    the disk is hashed again.
    """
    real = os.path.realpath(path)
    st = os.stat(real)
    key = (real, st.st_size, st.st_mtime_ns, st.st_ino)
    known = _SHA256_MEMO.get(key)
    if known is not None:
        return known
    h = hashlib.sha256()
    with open(real, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 22), b""):
            h.update(chunk)
    _SHA256_MEMO[key] = digest = h.hexdigest()
    return digest


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
    refs_native : str or None
        The multi-reference policy :meth:`_score` implements itself for an example with several references (for
        example ``"max"``, or a metric-specific one such as qa-sup's ``"pool"``); ``None`` when undeclared (then
        every explicitly chosen policy is computed by the base class, see below).
    refs_own : tuple of str
        Further metric-specific policies that :meth:`_score` implements itself when chosen (it reads
        :attr:`refs_policy`), e.g. ROUGE's ``pool`` (ROUGE-1.5.5 ``-f A``).
    refs_default : str or None
        The policy used unless :meth:`with_refs` chooses another: what the metric's paper did (``None``: the native
        one). Each metric documents it.
    refs_labels : mapping of str to str
        How a policy is written in the signature when it differs from its name (ROUGE: ``max`` -> ``best-f``).
    refs_select : mapping of str to str
        For ``max`` and ``jackknife``: the variant whose value selects the reference for each variant (ROUGE:
        ``rouge1-p`` -> ``rouge1-f``, as ``rouge_score``'s ``score_multi``); a variant not listed selects by itself.
    refs_fixed : bool
        True for metrics whose policy cannot be chosen (a learned metric takes its components' saved policies).
    parallel : str
        How :mod:`meta_eval.scoring.engines` may spread the batches: ``"process"`` (default; CPU metrics) over every
        worker process, ``"single"`` (neural metrics, which hold a loaded model) in one process per metric: the driver
        for the local engine, one actor for Ray, so a 100 MB+ model is never copied once per core.
    num_gpus : float
        GPUs the Ray engine reserves for a ``"single"`` metric's actor when the cluster has GPUs (else 0). The
        built-in metrics run on CPU: 0.
    holds : tuple of str
        The process-wide resources this metric loads and keeps for its next call, by the names their modules give
        :func:`metrics.memo.on_release` (``"vectors"``: word vectors; ``"encoder"``: the shared encoders and the
        sentence states memo; ``"bertscore"``, ``"moverscore"``, ``"bertlm"``, ``"qa"``: a model and its memo).
        A run releases a resource once no metric still to run holds it, and runs the metrics that hold the same
        resources one after the other (:func:`meta_eval.scoring.runner.run_order`), so that a run never keeps two
        metrics' models at once.
    in_default_run : bool
        False for a metric that runs only when named (``-m NAME``), never in a default choice (``meta-eval run``,
        ``leaderboard publish``) nor in ``-m all``; ``not_default_reason`` says why (TER: minutes on a summarization
        set).
    in_quick_run : bool
        False for a metric left out of the default choice of ``meta-eval run`` and ``meta-eval score``, which keeps
        to the metrics that take seconds on a laptop CPU: the neural ones (a model's forward pass over every text).
        It still runs when named, with ``-m all``, and in ``leaderboard publish``'s default choice (a published
        board has every metric). ``not_quick_reason`` says what makes it slow.

    Worker processes receive the configured, fitted metric by :mod:`pickle` (once per worker). A metric that holds
    state that cannot or should not be pickled (a loaded model, a memo with a lambda) drops it in ``__getstate__``
    and rebuilds it lazily at the first :meth:`score` (as ROUGE's memo tables and sacrebleu's metric objects do);
    its scores must not depend on which process rebuilt it. A metric that cannot be pickled at all is scored in the
    driver, with a warning.

    Multi-reference policies
    ------------------------
    Every reference-based metric (``needs_references``) accepts ``max``, ``mean``, ``first`` and ``jackknife``
    (:data:`REFS_POLICIES`), its native policy and its own ones (``refs_own``). When the chosen policy is the native one
    or an own one, :meth:`_score` sees the examples as they are. Otherwise the base class scores every (candidate,
    single reference) pair in one :meth:`_score` call (for ``first`` only the first reference) and aggregates each
    example's M scores per variant:

    - ``max``: the value of the reference with the highest selecting variant (``refs_select``; first on ties);
    - ``mean``: the mean over the M references;
    - ``first``: the first reference's value;
    - ``jackknife``: M = 1: the single value; M > 1: the mean over the M leave-one-out folds of the ``max`` over the
      other M - 1 references (Lin 2004, section 3.1: "the best score over M sets of M-1 references", averaged).
      SacreROUGE's jackknifing (``ReferencesJackknifer``) also averages over the M folds but scores each fold with
      ROUGE-1.5.5's ``-f A`` (counts pooled over the M - 1 references), not the best of them.

    The policy is part of the signature (and so of the cache key) whenever it is not the default:
    ``refs:<label>`` replaces the ``refs`` entry of :meth:`config` in place, or is appended after it. The command
    line's ``--option refs=...`` goes to every chosen metric that :meth:`accepts_refs` (its constructor need not take
    it); reference-free metrics ignore it there, and :meth:`with_refs` on one of them is an error.
    """

    name: ClassVar[str] = ""
    variants: ClassVar[tuple[str, ...]] = ()
    needs_references: ClassVar[bool] = True
    needs_source: ClassVar[bool] = False
    higher_is_better: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ()
    languages: ClassVar[tuple[str, ...] | None] = None
    language_reason: ClassVar[str] = ""
    install_hint: ClassVar[str] = ""
    libraries: ClassVar[tuple[str, ...]] = ()
    refs_native: ClassVar[str | None] = None
    refs_own: ClassVar[tuple[str, ...]] = ()
    refs_default: ClassVar[str | None] = None
    refs_labels: ClassVar[Mapping[str, str]] = {}
    refs_select: ClassVar[Mapping[str, str]] = {}
    refs_fixed: ClassVar[bool] = False
    parallel: ClassVar[str] = "process"
    num_gpus: ClassVar[float] = 0.0
    holds: ClassVar[tuple[str, ...]] = ()
    in_default_run: ClassVar[bool] = True
    not_default_reason: ClassVar[str] = ""
    in_quick_run: ClassVar[bool] = True
    not_quick_reason: ClassVar[str] = ""
    _refs: str | None = None  # the policy chosen with with_refs (None: refs_default)

    # -- description -------------------------------------------------------------------------------------------
    def config(self) -> Mapping[str, object]:
        """The settings that change this metric's scores (part of the signature)."""
        return {}

    def versions(self) -> dict[str, str]:
        """Versions of the libraries the scores depend on (part of the signature): ``libraries``, meta-eval, and for
        a plugin the distribution that installed it (:func:`metrics.code_digest.plugin_distribution`)."""
        from meta_eval.metrics.code_digest import plugin_distribution

        out = {dist: package_version(dist) for dist in self.libraries}
        if getattr(self, "tokenizer", None) == "spacy":  # metrics.text's tokenizer=spacy: spaCy's rules tokenize
            out["spacy"] = package_version("spacy")
        out["meta-eval"] = package_version("meta-eval")
        plugin = plugin_distribution(type(self))
        if plugin is not None:
            out[plugin[0]] = plugin[1]
        return out

    def code(self) -> str:
        """Digest of the code that computes this metric's scores (:func:`metrics.code_digest.code_digest`)."""
        from meta_eval.metrics.code_digest import code_digest

        return code_digest(type(self))

    def signature_config(self) -> dict[str, object]:
        """:meth:`config` with the multi-reference policy written in when it is not the default."""
        cfg = dict(self.config())
        policy = self._refs
        if policy is not None and policy != self._default_refs():
            cfg["refs"] = self.refs_labels.get(policy, policy)
        return cfg

    def signature(self) -> str:
        """sacrebleu-style signature: ``name|key:value|...|lib==version|code:<digest>``.

        The last part, ``code:``, is the digest of the metric's own source (:mod:`metrics.code_digest`), so an
        edited metric is a new signature, hence never served from the cache.
        """
        parts = [self.name]
        parts += [f"{k}:{v}" for k, v in self.signature_config().items()]
        parts += [f"{k}=={v}" for k, v in self.versions().items()]
        parts.append(f"code:{self.code()}")
        return "|".join(parts)

    def supported_languages(self) -> tuple[str, ...] | None:
        """The languages (ISO 639-1) whose text this configured metric is built for; ``None``: not restricted.

        The class attribute ``languages`` is the default (with ``language_reason`` saying why, e.g. "GloVe's vectors
        are English"); a metric whose languages depend on an option (the encoder's model) overrides this method. A
        judgment set that declares its candidates' language skips a metric not built for it (``meta-eval run``,
        ``leaderboard publish``), with the reason.
        """
        return self.languages

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """``None`` if the metric can run here, else why not and how to fix it."""
        import importlib.util

        missing = [mod for mod in cls.requires if importlib.util.find_spec(mod) is None]
        if missing:
            return f"missing {', '.join(missing)}: {cls.install_hint or 'install it'}"
        return None

    # -- multiple references -----------------------------------------------------------------------------------
    def _default_refs(self) -> str | None:
        return self.refs_default or self.refs_native

    def accepts_refs(self) -> bool:
        """Whether a multi-reference policy can be chosen for this metric (reference-based and not fixed)."""
        return bool(self.needs_references) and not self.refs_fixed

    def refs_policies(self) -> tuple[str, ...]:
        """The policies :meth:`with_refs` accepts: :data:`REFS_POLICIES` and the native one (empty if none)."""
        if not self.accepts_refs():
            return ()
        extra = ((self.refs_native,) if self.refs_native else ()) + tuple(self.refs_own)
        return tuple(dict.fromkeys(REFS_POLICIES + extra))

    @property
    def refs_policy(self) -> str | None:
        """The policy in force (``None``: an undeclared metric's native behaviour)."""
        return self._refs or self._default_refs()

    def with_refs(self, policy: str | None) -> "Metric":
        """Choose the multi-reference policy (``None`` restores the default); returns the metric itself.

        Raises
        ------
        MetricError
            For a reference-free metric, a metric whose policy is fixed, or a policy not in :meth:`refs_policies`.
        """
        if policy is None:
            self._refs = None
            return self
        if not self.accepts_refs():
            why = "its policy is fixed" if self.refs_fixed else "it reads no reference"
            raise MetricError(f"{self.name}: refs={policy!r} cannot be chosen: {why}")
        allowed = self.refs_policies()
        word = policy.strip().lower() if isinstance(policy, str) else policy
        if word not in allowed:
            raise MetricError(f"{self.name}: unknown refs policy {policy!r}; choose one of {', '.join(allowed)}")
        self._refs = word
        return self

    def _score_by_reference(self, examples: list[Example], policy: str) -> dict[str, np.ndarray]:
        """Score each (candidate, one reference) pair with :meth:`_score` and aggregate per example (``policy``)."""
        pairs, counts = [], []
        for ex in examples:
            refs = ex.references[:1] if policy == "first" else ex.references
            pairs += [Example(ex.candidate, (ref,), ex.source) for ref in refs]
            counts.append(len(refs))
        raw = self._checked(self._score(pairs), len(pairs), what=" (one row per reference)")
        bounds = np.concatenate([[0], np.cumsum(counts)])
        out = {v: np.empty(len(examples)) for v in self.variants}
        for i in range(len(examples)):
            lo, hi = int(bounds[i]), int(bounds[i + 1])
            for variant in self.variants:
                values = raw[variant][lo:hi]
                if policy == "first" or hi - lo == 1:
                    out[variant][i] = values[0]
                elif policy == "mean":
                    out[variant][i] = float(np.mean(values))
                else:
                    select = raw[self.refs_select.get(variant, variant)][lo:hi]
                    if policy == "max":
                        out[variant][i] = values[int(np.argmax(select))]
                    elif policy == "jackknife":
                        folds = []
                        for k in range(hi - lo):
                            others = select.copy()
                            others[k] = -np.inf
                            folds.append(values[int(np.argmax(others))])
                        out[variant][i] = float(np.mean(folds))
                    else:
                        raise MetricError(f"{self.name}: policy {policy!r} is native only; _score must handle it")
        return out

    def _checked(self, out: Mapping[str, Sequence[float]], n: int, what: str = "") -> dict[str, np.ndarray]:
        """``out`` as float64 arrays, one finite score per example for exactly the declared variants."""
        if set(out) != set(self.variants):
            raise RuntimeError(f"{self.name} returned variants {sorted(out)}, declared {list(self.variants)}")
        result = {}
        for variant in self.variants:
            arr = np.asarray(out[variant], dtype=np.float64)
            if arr.shape != (n,):
                raise RuntimeError(f"{self.name}/{variant}: {arr.shape} scores for {n} examples{what}")
            if not np.all(np.isfinite(arr)):
                bad = int(np.flatnonzero(~np.isfinite(arr))[0])
                raise NonFiniteScore(f"{self.name}/{variant}: non-finite score ({arr[bad]}) for example {bad}{what}",
                                     variant, float(arr[bad]), bad)
            result[variant] = arr
        return result

    # -- scoring -----------------------------------------------------------------------------------------------
    def degenerate(self, examples: Sequence[Example],
                   scores: Mapping[str, Sequence[float]] | None = None) -> list[str | None]:
        """Per example, why its score is a documented value rather than a measurement (e.g. ``"no known word in the
        candidate (scored 0.0)"``), else None; ``meta-eval run`` counts and prints these rows.

        ``scores``, this metric's scores of ``examples`` when known, lets an override examine only the rows that
        carry the documented value. Default: every row measured (all None).
        """
        return [None] * len(examples)

    def release(self) -> None:
        """Forget what this object keeps between :meth:`score` calls (memo tables), when a run is done with it.

        The next call rebuilds it; scores never depend on it. Shared resources (:attr:`holds`) are released by the
        run, not here. Default: nothing to forget.
        """

    def fit(self, examples: Sequence[Example]) -> None:
        """Compute statistics over the whole scored set (default: nothing; the scores depend on no set).

        :func:`meta_eval.scoring.runner.score_examples` calls it with every example of the set, in input order,
        duplicates included, *before* it takes the signature and looks up the cache, so that a metric whose scores
        depend on the whole set (corpus statistics such as MoverScore's IDF, see :mod:`metrics.moverscore`) computes
        them once, independently of the batches and of what is cached. An override must be deterministic, should stay
        cheap (it also runs when every score is cached: defer heavy work to :meth:`_score`), and must name what it
        fitted on in :meth:`config` under the key ``"fit"`` (e.g. a hash of the set's texts), so that scores
        fitted on different sets never share a signature, hence a cache key.
        """

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
                raise MetricError(f"example {i} of the {len(examples)} given to score() (from 0) is a "
                                  f"{type(ex).__name__}, not a metrics.Example")
            # positions in this call only: meta_eval.scoring.runner.score_examples checks whole sets first and
            # names rows
            if self.needs_references and not ex.references:
                raise MetricError(f"{self.name}: example {i} of the {len(examples)} given to score() (from 0) has "
                                  "no reference, and this metric needs one")
            if self.needs_source and not ex.source:
                raise MetricError(f"{self.name}: example {i} of the {len(examples)} given to score() (from 0) has "
                                  "no source, and this metric needs one")
        if not examples:
            return {v: np.zeros(0) for v in self.variants}
        policy = self.refs_policy
        native = policy is None or policy == self.refs_native or policy in self.refs_own
        n = len(examples)  # counted before the metric sees the list: it gets a list of its own, which it may change
        try:
            if self.needs_references and not native and not self.refs_fixed:
                return self._checked(self._score_by_reference(list(examples), policy), n)
            return self._checked(self._score(list(examples)), n)
        except NonFiniteScore as exc:
            if exc.example is None and 0 <= exc.index < n:
                exc.example = examples[exc.index]  # for the runner to name its row
            raise

    @abc.abstractmethod
    def _score(self, examples: list[Example]) -> Mapping[str, Sequence[float]]:
        """Compute the scores of a validated, non-empty batch."""

    def __repr__(self) -> str:
        cfg = ", ".join(f"{k}={v!r}" for k, v in self.signature_config().items())
        return f"{type(self).__name__}({cfg})"

