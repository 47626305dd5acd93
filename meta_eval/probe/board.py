"""Blind spots on a leaderboard: ``<board>/blindspots.json`` and its heatmaps, added to a published board without
recomputing its correlations (``meta-eval leaderboard probe BOARD`` or ``meta-eval probe ... --board BOARD``).

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

__all__ = ["FILE", "SCHEMA", "board_options", "figure_name", "probe_board", "read_blindspots", "save_to_board"]

SCHEMA = "meta-eval-blindspots/1"
FILE = "blindspots.json"


def figure_name(judgments: str, subset: str) -> str:
    """``figures/blindspots-<set>-<subset>.png``: where a board keeps a set's heatmap."""
    return f"figures/blindspots-{judgments}-{subset}.png".replace(":", "-")


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
    path = folder / "results.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MetaEvalError(f"{path}: not a readable leaderboard ({exc})") from None


def save_to_board(folder: str | Path, results: Sequence, command: str) -> list[Path]:
    """Write ``folder/blindspots.json`` from probe ``results`` (one per set; a set already in the file is replaced,
    the others kept) with each set's heatmap, then re-render the board's pages. Returns the files written."""
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
        png = _png(doc)
        if png is not None:
            doc["figure"] = figure_name(doc["judgments"], doc["subset"])
            files.append((doc["figure"], png))
        docs[(doc["judgments"], doc["subset"])] = doc
    blind = {"schema": SCHEMA, "command": command, "meta_eval_version": package_version("meta-eval"),
             "sets": sorted(docs.values(), key=lambda d: (d["judgments"], d["subset"]))}
    files.insert(0, (FILE, json.dumps(blind, indent=1) + "\n"))
    _write_board_files(folder, files)
    render_board(folder)
    return [folder / name for name, _ in files] + [folder / "README.md", folder / "index.html"]


def _png(doc: dict) -> bytes | None:
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        return None
    from meta_eval.probe.report import heatmap

    fig = heatmap(doc)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": "meta-eval"}, bbox_inches="tight")
    __import__("matplotlib.pyplot").pyplot.close(fig)
    return buf.getvalue()


def probe_board(folder: str | Path, metrics: str | Sequence[str] | None = None, *, command: str = "",
                **kwargs) -> list[Path]:
    """Probe every set of the board in ``folder`` with its own metrics (or ``metrics``) and options (the board
    command's ``-o``), then :func:`save_to_board`. ``kwargs`` go to :func:`meta_eval.probe.run.probe`."""
    import meta_eval.metrics.registry as registry
    from meta_eval.probe.run import probe

    folder = Path(folder)
    board = _board(folder)
    options = board_options(board.get("command", ""))
    results = []
    for block in board.get("sets", []):
        names = metrics or ",".join(m for m in dict.fromkeys(x["metric"] for x in block["metrics"])
                                    if m in registry.names())  # imported scores (--scores) cannot be probed
        results.append(probe(block["judgments"], names, subset=block["subset"], options=options, **kwargs))
    if not results:
        raise MetaEvalError(f"{folder / 'results.json'}: a board without sets")
    return save_to_board(folder, results, command or f"meta-eval leaderboard probe {folder}")
