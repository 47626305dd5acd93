"""Blind spots on a leaderboard: ``<board>/blindspots.json`` and its heatmaps, added to a published board without
recomputing its correlations (``meta-eval leaderboard probe BOARD``).

The file (schema :data:`SCHEMA`, documented in ``leaderboard/SCHEMA.md``) holds one probe document per set of the
board (:meth:`meta_eval.probe.run.ProbeResult.to_dict` without the per-item changes, plus ``figure``: the heatmap's
path in the board); :func:`meta_eval.leaderboard.publish.render_board` then re-renders the board's pages, which show a
"Blind spots" section whenever the file exists.
"""
from __future__ import annotations

import io
import json
import shlex
from pathlib import Path
from typing import Sequence

from meta_eval.errors import MetaEvalError

__all__ = ["FILE", "IMPORTED", "SCHEMA", "board_metrics", "board_options", "check_blindspots", "figure_name",
           "probe_board", "read_blindspots", "save_to_board", "set_sources"]

SCHEMA = "meta-eval-blindspots/1"
FILE = "blindspots.json"


def figure_name(judgments: str, subset: str) -> str:
    """``figures/blindspots-<set>-<subset>.png``: where a board keeps a set's heatmap (a path separator or a control
    character in a name written ``_``: :func:`meta_eval.report.escape.file_segment`)."""
    from meta_eval.report.escape import file_segment

    return f"figures/blindspots-{file_segment(f'{judgments}-{subset}')}.png".replace(":", "-")


def read_blindspots(folder: str | Path) -> dict | None:
    """The board's blindspots.json, or None without one; an unreadable file or another schema is a
    :class:`MetaEvalError` naming it."""
    path = Path(folder) / FILE
    if not path.exists():
        return None
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MetaEvalError(f"{path}: not a readable blind-spots file ({exc})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise MetaEvalError(f"{path}: schema {doc.get('schema') if isinstance(doc, dict) else None!r}, this "
                            f"meta-eval reads {SCHEMA}")
    return doc


def board_options(command: str) -> list[str]:
    """The ``-o KEY=VALUE`` options of a board's command (e.g. qags: ``ref=source``)."""
    words = shlex.split(command)
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-o", "--option")]


def _board(folder: Path) -> dict:
    from meta_eval.leaderboard.index import read_board

    return read_board(folder / "results.json")  # a BoardError (a MetaEvalError) naming it, never a KeyError


def save_to_board(folder: str | Path, results: Sequence, command: str, plan=None) -> list[Path]:
    """Write ``folder/blindspots.json`` from probe ``results`` (one per set; a set already in the file is replaced,
    the others kept) with each set's heatmap, then re-render the board's pages. Returns the files written. ``plan``:
    the probe's :class:`~meta_eval.report.outputs.OutputPlan` (its inputs are never written over)."""
    from meta_eval.leaderboard.publish import _write_board_files, render_board
    from meta_eval.metrics.base import package_version

    folder = Path(folder)
    _board(folder)  # a board folder, or a clear error before anything is written
    old = read_blindspots(folder) or {"sets": []}
    docs = {(d["judgments"], d["subset"]): d for d in old["sets"]}
    files: list[tuple[str, str | bytes]] = []
    for result in results:
        doc = result.to_dict(changes=False)
        doc.pop("wall_seconds", None)
        doc.pop("provenance", None)  # the board records its own command (blindspots.json unchanged)
        png = _png(doc)
        if png is not None:
            doc["figure"] = figure_name(doc["judgments"], doc["subset"])
            files.append((doc["figure"], png))
        docs[(doc["judgments"], doc["subset"])] = doc
    from meta_eval.metrics.redact import redact

    blind = {"schema": SCHEMA, "command": redact(command), "meta_eval_version": package_version("meta-eval"),
             "sets": sorted(docs.values(), key=lambda d: (d["judgments"], d["subset"]))}
    files.insert(0, (FILE, json.dumps(blind, indent=1) + "\n"))
    _write_board_files(folder, files, plan=plan, option="leaderboard probe")
    render_board(folder)
    return [folder / name for name, _ in files] + [folder / "README.md", folder / "index.html"]


def _png(doc: dict) -> bytes | None:
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return None
    from meta_eval.probe.report import heatmap
    from meta_eval.report.figures import shown_as_text

    fig = shown_as_text(heatmap(doc))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": "meta-eval"}, bbox_inches="tight")
    __import__("matplotlib.pyplot").pyplot.close(fig)
    return buf.getvalue()


def _taken(options: list[str], names) -> list[str]:
    """The board's options that one of the probed metrics takes (a board's ``-o model=...`` is for its neural
    metrics; probing only ROUGE must not fail on it)."""
    import meta_eval.metrics.registry as registry
    from meta_eval.scoring.selection import metric_config, parse_options, requested_names

    wanted = [n.strip() for n in requested_names(names).split(",") if n.strip()]
    if registry.ALL in wanted:
        return options
    classes = [registry.get_class(n) for n in wanted if n in registry.names()]
    return [f"{k}={v}" for k, v in parse_options(options).items()
            if any(k in metric_config(cls, {k: v}) for cls in classes)]


def probe_board(folder: str | Path, metrics: str | Sequence[str] | None = None, *, command: str = "",
                judgments: str | None = None, **kwargs) -> list[Path]:
    """Probe every set of the board in ``folder`` with its own metrics (or ``metrics``) and options (the board
    command's ``-o``), then :func:`save_to_board`. ``kwargs`` go to :func:`meta_eval.probe.run.probe`, ``variants``
    (``--variants``) included: the variants probed are chosen as ``meta-eval probe`` chooses them (the same parser
    and rule, :func:`meta_eval.scoring.selection.resolve_metric_choice`; default: every variant but ROUGE's precision
    and recall, whatever variants the board shows). The board's metrics that cannot be probed (imported scores:
    they exist for the board's rows only) are listed as not probed, with the reason (:func:`board_metrics`).
    ``judgments`` (``-j``, comma-separated): the files of the board's sets that were published from a file
    (:func:`set_sources`). The folder goes through :class:`~meta_eval.report.outputs.OutputPlan` before any
    probing (never in the judgment data folder, never over a ``-j`` file, writable); an empty ``variants`` fails
    before that."""
    from meta_eval.metrics.redact import MASK
    from meta_eval.probe.run import probe
    from meta_eval.report.outputs import OutputPlan
    from meta_eval.scoring.selection import parse_variants

    parse_variants(kwargs.get("variants"))  # an empty --variants: one clear error before the folder is touched
    # before any probing: the board folder is never in the judgment data folder, and can be written
    plan = OutputPlan(judgments=judgments, data_dir=kwargs.get("data_dir"), cache=kwargs.get("cache"))
    folder = plan.add_folder(folder, "leaderboard probe", (FILE, "README.md", "index.html", "figures"), exists=True)
    board = _board(folder)
    options = board_options(board.get("command", ""))
    chosen = []
    for block in board.get("sets", []):
        names, not_probed = (metrics, []) if metrics else board_metrics(block, folder)
        taken = _taken(options, names)
        hidden = [o.split("=", 1)[0] for o in taken if MASK in o]
        if hidden:  # a recorded command never holds a secret (metrics/redact.py): it cannot be sent again
            raise MetaEvalError(f"{folder / 'results.json'}: the board's command has a redacted credential in -o "
                                f"{', '.join(hidden)} (meta-eval never records one), so this probe cannot send it; "
                                f"probe the set with `meta-eval probe {_probe_source(block)} -m {names} -o "
                                f"{hidden[0]}=...` giving it yourself")
        chosen.append((block, names, not_probed, taken))
    sources = set_sources(board, folder, judgments, kwargs.get("data_dir"))  # every set found before any probing
    results = []
    for block, names, not_probed, taken in chosen:
        source, subset = sources[(block["judgments"], block["subset"])]
        result = probe(source, names, subset=subset, options=taken, **kwargs)
        result.skipped = [*result.skipped, *not_probed]
        results.append(result)
    if not results:
        raise MetaEvalError(f"{folder / 'results.json'}: a board without sets")
    return save_to_board(folder, results, command or f"meta-eval leaderboard probe {folder}", plan)


#: Why an imported metric of a board is not probed (blindspots.json's ``skipped``, the pages' "Metric not probed").
IMPORTED = "imported scores (--scores) exist for the board's rows only: they cannot score the perturbed texts"


def board_metrics(block: dict, folder: Path) -> tuple[str, list[tuple[str, str]]]:
    """The metrics of a board's set that ``leaderboard probe`` probes by default (comma-separated, registered here,
    a ``learned:NAME`` model included) and those it cannot, each with the reason (:data:`IMPORTED`, or not
    registered here: a ``--plugin`` metric); none to probe is a :class:`MetaEvalError` saying why."""
    import meta_eval.metrics.registry as registry

    known = set(registry.names(include_named_only=True))
    signatures = {m["metric"]: m["signature"] for m in reversed(block["metrics"])}  # the first one of each metric
    probed, not_probed = [], []
    for metric in dict.fromkeys(m["metric"] for m in block["metrics"]):
        if metric in known:
            probed.append(metric)
        elif str(signatures[metric]).startswith("imported:"):
            not_probed.append((metric, IMPORTED))
        else:
            not_probed.append((metric, "not a metric registered here (a --plugin metric: `meta-eval probe --plugin "
                                       "FILE` probes it)"))
    if not probed:
        raise MetaEvalError(f"{folder / 'results.json'}: no metric of {block['judgments']} ({block['subset']}) can be "
                            "probed: " + "; ".join(f"{m}: {r}" for m, r in not_probed) + "; name metrics with -m")
    return ",".join(probed), not_probed


def set_sources(board: dict, folder: Path, judgments: str | None, data_dir) -> dict[tuple[str, str], tuple]:
    """``(set, subset) -> (what probe() loads, subset)`` for every set of the board: a built-in set by its name and
    subset; a set published from a file by the file in ``judgments`` (``-j``, comma-separated) that loads under the
    set's name, since a board records the name only, never a local path. A set from a file without one, or a file
    that is none of the board's sets, is a :class:`MetaEvalError` saying what to give."""
    from meta_eval import judgments as judgment_sets
    from meta_eval.provenance import digest

    files: dict[str, str] = {}
    for given in [j.strip() for j in (judgments or "").split(",") if j.strip()]:
        try:
            name = judgment_sets.load(given, data_dir).name
        except (judgment_sets.JudgmentError, judgment_sets.DataError) as exc:
            raise MetaEvalError(f"-j {given}: {exc}") from None
        files.setdefault(name, given)
    sets = board.get("sets", [])
    unused = [f for name, f in files.items() if name not in {b["judgments"] for b in sets}]
    if unused:
        raise MetaEvalError(f"-j {unused[0]}: not one of the board's sets ({', '.join(b['judgments'] for b in sets)}); "
                            "-j gives the files of the sets the board was published from")
    sources = {}
    for block in sets:
        name, subset = block["judgments"], block["subset"]
        if judgment_sets.is_builtin(name):  # by its name and the board's subset, whatever -j says
            sources[(name, subset)] = (name, subset)
        elif name in files:
            published = block.get("file_sha256")
            if published is not None and digest(files[name]) != published:
                raise MetaEvalError(f"-j {files[name]}: not the file the board's set {name!r} was published from "
                                    f"(its SHA-256 differs from the board's file_sha256 {published[:12]}...); give "
                                    "the file the board was published from, or publish the board again")
            sources[(name, subset)] = (files[name], None)
        else:
            hint = [w for w in _command_sets(board.get("command", "")) if Path(w).name.split(".")[0] == name]
            raise MetaEvalError(f"{folder / 'results.json'}: its set {name!r} was published from a file, not a "
                                "built-in set, and a board records the set's name only, never a local path: give "
                                f"the file with `meta-eval leaderboard probe {folder} -j FILE`"
                                + (f" (the board's command read {hint[0]})" if hint else ""))
    return sources


def _probe_source(block: dict) -> str:
    """How ``meta-eval probe`` is given a board's set: a built-in set by ``-j NAME --subset SUBSET``, a set published
    from a file by ``-j FILE`` (a board records the set's name only, never a local path)."""
    from meta_eval import judgments as judgment_sets

    name, subset = block["judgments"], block["subset"]
    if not judgment_sets.is_builtin(name):
        return f"-j FILE (the file of set {shlex.quote(name)})"
    return f"-j {shlex.quote(name)}" + (f" --subset {shlex.quote(subset)}" if subset else "")


def _command_sets(command: str) -> list[str]:
    """The sets a board's recorded command gave to ``-j``/``--judgments`` (as typed), for a hint."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    given = [words[i + 1] for i, w in enumerate(words[:-1]) if w in ("-j", "--judgments")]
    given += [w.split("=", 1)[1] for w in words if w.startswith("--judgments=")]
    return [s.strip() for g in given for s in g.split(",") if s.strip()]


def _config_part(signature: str) -> str:
    """A metric signature without its library versions (``name==version`` parts), its numeric mode (``num:...``:
    the machine's kernels, metrics/numeric.py, not the code's; a CPU whose MKL keeps its own branch signs
    ``num:portable(MKL_CBWR=AUTO,STRICT)``) and the set it was fitted on (``fit:...``: MoverScore's IDF over the
    probe's items, which a metric built here without data signs ``fit:per-call``)."""
    return "|".join(p for p in signature.split("|") if "==" not in p and not p.startswith(("num:", "fit:")))


def check_blindspots(folder: str | Path, board: dict | None = None) -> list[str]:
    """What is inconsistent in a board's blindspots.json, as sentences (``[]``: nothing): a set that is not one of
    the board's, a metric whose signature (library versions aside) differs from the current code's with the board's
    options, a perturbation unknown or at another version than the registry's, counts that do not add up (drops +
    ties + rises = items applied; applied + skipped = items), a heatmap named but missing. ``board``: the board's
    document (default: its results.json; ``leaderboard publish`` checks the board it is about to write)."""
    import meta_eval.metrics.registry as registry
    from meta_eval.probe.run import REFERENCE_SWAP
    from meta_eval.probe.perturbations import PERTURBATIONS
    from meta_eval.scoring.selection import build, metric_config, parse_options

    folder = Path(folder)
    blind = read_blindspots(folder)
    if blind is None:
        return []
    board = _board(folder) if board is None else board
    sets = {(b["judgments"], b["subset"]) for b in board["sets"]}
    options = parse_options(board_options(board.get("command", "")))
    known = {**{p.name: p for p in PERTURBATIONS.values()}, REFERENCE_SWAP.name: REFERENCE_SWAP}
    problems = []
    for doc in blind["sets"]:
        where = f"{folder.name}/{FILE} {doc['judgments']} ({doc['subset']})"
        if (doc["judgments"], doc["subset"]) not in sets:
            problems.append(f"{where}: not a set of the board")
        for m in doc["metrics"]:
            if m["metric"] not in registry.names():
                problems.append(f"{where}: metric {m['metric']} is not registered")
                continue
            cls = registry.get_class(m["metric"])
            if cls.unavailable_reason(**metric_config(cls, options, cls.unavailable_reason)) is not None:
                continue  # cannot be built here with the board's options (its model): nothing to compare
            mine = build(cls, metric_config(cls, options)).signature()
            if _config_part(mine) != _config_part(m["signature"]):
                problems.append(f"{where}: {m['metric']}'s signature is {m['signature']!r}, the code's {mine!r}")
        for p in doc["perturbations"]:
            current = known.get(p["name"])
            if current is None or current.version != p["version"]:
                problems.append(f"{where}: perturbation {p['signature']} is "
                                + ("unknown" if current is None else f"at version {current.version} now"))
            if p["n_applied"] + p["n_skipped"] != p["n_items"]:
                problems.append(f"{where}: {p['name']}: applied + skipped != items")
        applied = {p["name"]: p["n_applied"] for p in doc["perturbations"]}
        for c in doc["cells"]:
            if c["drops"] + c["ties"] + c["rises"] != c["n"] or \
                    c["n"] + c.get("not_measured", 0) != applied.get(c["perturbation"]):
                problems.append(f"{where}: {c['variant']} x {c['perturbation']}: counts do not add up")
        if doc.get("figure") and not (folder / doc["figure"]).exists():
            problems.append(f"{where}: {doc['figure']} is missing")
    return problems
