"""The one exception a library caller catches: :class:`MetaEvalError`, whose message is the sentence the command line
prints after ``error:`` and whose ``code`` is the command's exit status (2: a choice or an input that cannot work,
fixed before anything long ran; 1: the work ran but something asked for is missing)."""
from __future__ import annotations

__all__ = ["MetaEvalError", "what_is_kept"]


class MetaEvalError(Exception):
    """A problem the user can fix; ``str(exc)`` says what and how, ``exc.code`` is the CLI's exit status."""

    def __init__(self, message: str, code: int = 2):
        super().__init__(message)
        self.code = code


def what_is_kept(no_cache: bool, cache=None) -> str:
    """What a command stopped early (Ctrl-C, SIGTERM, a failed metric) says of the scores it computed: in the
    cache, so that the same command resumes; under ``--no-cache``, nowhere; with a ``cache`` file this process cannot
    write (a file without a write bit, or in a folder it may not write: the cache then only reads,
    :mod:`meta_eval.scoring.cache`), nowhere either.

    >>> what_is_kept(True)
    'nothing was kept (--no-cache): a rerun starts again'
    """
    if no_cache:
        return "nothing was kept (--no-cache): a rerun starts again"
    if cache is not None:
        from meta_eval.scoring.cache import can_save  # the cache's own test of its write bits, read when asked

        if not can_save(cache):
            return (f"the cache {cache} cannot be written (read-only), so the scores computed since it was read were "
                    "not kept: a rerun computes them again")
    return "every finished batch is in the cache; rerun the same command to resume"
