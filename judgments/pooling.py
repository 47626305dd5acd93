"""Pooled language-pair subsets: one set holding the rows of several language pairs of a built-in MT set.

``load("wmt23", subset="en-de,zh-en")`` (and ``wmt21-mqm-ted`` likewise) gives one :class:`~judgments.base.JudgmentSet`
with the rows of every listed subset, in the order given. Each item is one of the set's subsets (a language pair,
or ``<pair>+human``); each language pair may appear once. In the pooled set:

- every row's ``system`` is ``"<pair>:<system>"``, so systems of different pairs never merge (WMT21 TED has a
  ``Facebook-AI`` in en-de and in zh-en: two systems, ``en-de:Facebook-AI`` and ``zh-en:Facebook-AI``);
  :meth:`JudgmentSet.system_group <judgments.base.JudgmentSet.system_group>` gives the pair of a system back, and
  ``pooled_groups`` lists the pairs;
- documents and row ids are those of the parts (they already start with their pair: ``en-de:12``); a document held
  by two pairs is an error;
- ``subset`` is the list normalised (items stripped, joined with ``,``: ``"en-de,zh-en"``), ``language`` the parts'
  common target language, or None when they differ; the notes say what WMT pools and repeat the parts' notes.

WMT pools language pairs for one statistic only: the system-level pairwise accuracy of WMT22 and WMT23 (Kocmi et al.
2021, "To Ship or Not to Ship"; mt-metrics-eval ``tasks.WMT23``, whose first task is ``accuracy`` over
``"en-de,he-en,zh-en"``). ``data.CompareMetricsWithGlobalAccuracy`` counts the agreeing system pairs *within* each
language pair and divides by the number of such pairs over all language pairs; two systems of different pairs are
never compared. Every other WMT statistic is computed per language pair.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from meta_eval.judgments.base import JudgmentError, JudgmentSet, check_subset

__all__ = ["POOLED_NOTE", "build_subset", "group_of", "pool", "subset_parts"]

POOLED_NOTE = ("pooled language pairs {pairs}: every system is named '<pair>:<system>', so systems of different pairs "
               "never merge. WMT pools language pairs only for the system-level pairwise accuracy, counting the "
               "system pairs within each language pair (mt-metrics-eval CompareMetricsWithGlobalAccuracy); its "
               "other statistics are computed per language pair, as the human scores of different pairs are not on "
               "one scale")


def group_of(part: str) -> str:
    """The language pair of a subset: ``"en-de"`` for ``"en-de"`` and ``"en-de+human"``."""
    return part.split("+", 1)[0]


def _plural(items: list[str]) -> str:
    return ", ".join(repr(i) for i in items)


def subset_parts(name: str, subset: str, subsets: Sequence[str]) -> tuple[str, ...]:
    """The subsets that ``subset`` names: ``(subset,)`` for one of ``subsets``, else the items of a comma-separated
    list of them (a pooled subset), each language pair at most once.

    Raises
    ------
    JudgmentError
        For an unknown subset, an empty item, or a language pair named twice (the message lists the subsets).
    """
    if "," not in subset:
        check_subset(name, subset, subsets)
        return (subset,)
    parts = tuple(item.strip() for item in subset.split(","))
    if not all(parts):
        raise JudgmentError(f"{name}: the pooled subset {subset!r} has an empty item; list language pairs separated "
                            f"by commas, e.g. {','.join(list(dict.fromkeys(map(group_of, subsets)))[:2])!r}")
    unknown = [p for p in parts if p not in subsets]
    if unknown:
        what = "is not a subset" if len(unknown) == 1 else "are not subsets"
        raise JudgmentError(f"{name}: the pooled subset {subset!r} names {_plural(unknown)}, which {what} of {name}; "
                            f"its subsets are {', '.join(subsets)}")
    groups = [group_of(p) for p in parts]
    repeated = list(dict.fromkeys(g for g in groups if groups.count(g) > 1))
    if repeated:
        pairs = "pairs" if len(repeated) > 1 else "pair"
        raise JudgmentError(f"{name}: the pooled subset {subset!r} names the language {pairs} {_plural(repeated)} more "
                            "than once; list each pair once")
    return parts


def _notes(groups: Sequence[str], sets: Sequence[JudgmentSet]) -> tuple[str, ...]:
    """The parts' notes, each once: as it is when every part has it, else after the pairs that have it."""
    holders: dict[str, list[str]] = {}
    for group, jset in zip(groups, sets):
        for note in jset.notes:
            holders.setdefault(note, []).append(group)
    return tuple(note if len(have) == len(groups) else f"{', '.join(have)}: {note}" for note, have in holders.items())


def pool(name: str, parts: Sequence[str], sets: Sequence[JudgmentSet]) -> JudgmentSet:
    """One set holding the rows of ``sets`` (the subsets ``parts`` of the set ``name``, in order) with every system
    renamed ``"<pair>:<system>"`` (see the module docstring)."""
    if len(parts) != len(sets) or len(parts) < 2:
        raise ValueError(f"pool needs two or more subsets and one set per subset, got {list(parts)} and {len(sets)}")
    groups = tuple(group_of(p) for p in parts)
    rows, doc_group = [], {}
    for group, jset in zip(groups, sets):
        for row in jset.rows:
            other = doc_group.setdefault(row.doc_id, group)
            if other != group:
                raise JudgmentError(f"{name}: document {row.doc_id!r} is in language pairs {other} and {group}; a "
                                    "pooled set needs each document in one pair")
            system = row.system
            if system is not None and jset.multi_system_separator:
                system = jset.multi_system_separator.join(f"{group}:{s}" for s in jset.row_systems(row))
            elif system is not None:
                system = f"{group}:{system}"
            rows.append(replace(row, system=system))
    first = sets[0]
    dimensions = tuple(dict.fromkeys(d for jset in sets for d in jset.dimensions))
    if any(jset.default_dimension != first.default_dimension for jset in sets):
        raise JudgmentError(f"{name}: the subsets {', '.join(parts)} have different default human dimensions")
    languages = {jset.language for jset in sets}
    return JudgmentSet(
        name, rows, dimensions, first.default_dimension, subset=",".join(parts),
        description=f"{name} pooled over {', '.join(groups)}: " + "; ".join(jset.description for jset in sets),
        duplicates=first.duplicates, multi_system_separator=first.multi_system_separator,
        default_reason=first.default_reason,
        notes=(POOLED_NOTE.format(pairs=", ".join(groups)),) + _notes(groups, sets),
        default_baseline=first.default_baseline,
        task=first.task, licence=first.licence, data_source=first.data_source, annotators=first.annotators,
        language=languages.pop() if len(languages) == 1 else None, pooled_groups=groups)


def build_subset(name: str, subset: str, subsets: Sequence[str], make: Callable[[str], JudgmentSet]) -> JudgmentSet:
    """``make(subset)`` for a plain subset; for a comma-separated list (:func:`subset_parts`), ``make`` of each item,
    pooled (:func:`pool`)."""
    parts = subset_parts(name, subset, subsets)
    if len(parts) == 1:
        return make(parts[0])
    return pool(name, parts, [make(part) for part in parts])
