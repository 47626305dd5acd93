"""Parts of the ``meta-eval`` command line kept out of ``cli.py`` (a thin shell with a line budget): the options
``--limit`` and ``--sample`` shared by ``run``, ``score`` and ``probe`` (:mod:`judgments.rows`), and the root group
that keeps the arguments a command was given, for the ``"provenance"`` of its JSON (:mod:`meta_eval.provenance`).
Imported by ``cli.py`` at start: nothing heavy here."""
from __future__ import annotations

import typer
import typer.core

from meta_eval import provenance

__all__ = ["LIMIT", "SAMPLE", "ArgvGroup"]

LIMIT = typer.Option(None, "--limit", help="A quick trial: the first N rows in file order (recorded in the output)")
SAMPLE = typer.Option(None, "--sample", help="A quick trial: N rows drawn without replacement with --seed (recorded "
                      "in the output)")


class ArgvGroup(typer.core.TyperGroup):
    """The root group of ``meta-eval``: the arguments it parses (``sys.argv[1:]`` from a shell, the ``args`` of
    ``app(args=...)`` or typer's ``CliRunner``) are the command line :func:`meta_eval.provenance.command` records,
    until the command's context closes (a later library call in the same process records ``null``)."""

    def parse_args(self, ctx, args):
        provenance.begin(list(args), ctx)
        return super().parse_args(ctx, args)
