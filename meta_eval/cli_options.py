"""Parts of the ``meta-eval`` command line kept out of ``cli.py`` (a thin shell with a line budget): the options
``--limit`` and ``--sample`` shared by ``run``, ``score`` and ``probe`` (:mod:`judgments.rows`), the options
``run --protocol`` refuses (:func:`refused_with_protocol`), and the root group that keeps the arguments a command was
given, for the ``"provenance"`` of its JSON (:mod:`meta_eval.provenance`). Imported by ``cli.py`` at start: nothing
heavy here."""
from __future__ import annotations

import typer
import typer.core

from meta_eval import provenance

__all__ = ["LIMIT", "SAMPLE", "PROTOCOL_TAKES", "ArgvGroup", "refused_with_protocol"]

LIMIT = typer.Option(None, "--limit", help="A quick trial: the first N rows in file order (recorded in the output)")
SAMPLE = typer.Option(None, "--sample", help="A quick trial: N rows drawn without replacement with --seed (recorded "
                      "in the output)")
SAMPLE_SEED = typer.Option(None, "--seed", help="Seed of --sample's draw (only with --sample) \\[default: 0]")

#: the parameters of ``meta-eval run`` that ``--protocol`` takes: where the data and the cache are, how to score, the
#: resampling and --output; the protocol fixes the rest (and lists every metric not run with its reason: --verbose)
PROTOCOL_TAKES = frozenset({"protocol", "data_dir", "cache", "no_cache", "batch_size", "engine", "workers", "address",
                            "actors", "gpus", "resamples", "seed", "output", "force", "device", "dtype", "verbose"})


def refused_with_protocol(ctx: typer.Context) -> list[str]:
    """The options of ``meta-eval run`` (its context ``ctx``) that ``--protocol`` does not take (not in
    :data:`PROTOCOL_TAKES`) and that were given a value other than their default: their long names, in order."""

    def plain(value):
        return list(value) if isinstance(value, (list, tuple)) else value

    return [param.opts[0] for param in ctx.command.params
            if param.name not in PROTOCOL_TAKES and plain(ctx.params.get(param.name)) != plain(param.default)]


class ArgvGroup(typer.core.TyperGroup):
    """The root group of ``meta-eval``: the arguments it parses (``sys.argv[1:]`` from a shell, the ``args`` of
    ``app(args=...)`` or typer's ``CliRunner``) are the command line :func:`meta_eval.provenance.command` records,
    until the command's context closes (a later library call in the same process records ``null``)."""

    def parse_args(self, ctx, args):
        provenance.begin(list(args), ctx)
        return super().parse_args(ctx, args)
