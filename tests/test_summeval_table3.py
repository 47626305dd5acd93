"""The SummEval loader against the paper's own numbers: Fabbri et al. (TACL 2021), Table 3.

Table 3 prints each system's expert ratings (coherence, consistency, fluency, relevance), the mean of three experts
averaged over the 100 annotated CNN/DailyMail documents, to 2 decimals. The public judgment file has 16 of the table's
17 rows (the table also lists M23-Pegasus (dynamic mix); the file's M23 is Pegasus (C4)), and every one of the 16 must
round to the printed value. This also fixes what the summeval-2021 protocol can and cannot reproduce.
"""
from __future__ import annotations

import numpy as np
import pytest

from meta_eval import judgments

# Table 3, "Human ratings of summaries along four evaluation dimensions, averaged over three expert annotators"
TABLE_3 = {  # system: (coherence, consistency, fluency, relevance)
    "M0": (4.16, 4.98, 4.94, 4.14),   # LEAD-3
    "M1": (3.22, 4.98, 4.90, 3.82),   # NEUSUM
    "M2": (3.28, 4.99, 4.83, 3.81),   # BanditSum
    "M5": (3.71, 4.97, 4.81, 4.06),   # RNES
    "M8": (3.29, 4.65, 4.79, 3.55),   # Pointer Generator
    "M9": (2.38, 4.67, 4.50, 3.52),   # Fast-abs-rl
    "M10": (2.73, 4.25, 4.42, 3.38),  # Bottom-Up
    "M11": (2.28, 3.27, 3.65, 3.15),  # Improve-abs
    "M12": (3.60, 4.96, 4.85, 3.85),  # Unified-ext-abs
    "M13": (3.44, 4.82, 4.86, 3.83),  # ROUGESal
    "M14": (3.20, 4.90, 4.74, 3.63),  # Multi-task (Ent + QG)
    "M15": (3.35, 4.95, 4.80, 3.67),  # Closed book decoder
    "M17": (4.00, 4.93, 4.93, 4.23),  # T5
    "M20": (3.63, 3.40, 3.97, 3.30),  # GPT-2 (zero shot)
    "M22": (4.18, 4.94, 4.90, 4.25),  # BART
    "M23": (4.16, 4.91, 4.88, 4.26),  # Pegasus (C4)
}
DIMENSIONS = ("coherence", "consistency", "fluency", "relevance")


# the one printed cell the public file does not round to: the file's M15 consistency mean is 4.9367 (over its 100 documents),
# which rounds to 4.94; the paper prints 4.95 (its table was made from the authors' full annotation file)
KNOWN_OFF_BY_ONE_DIGIT = {("M15", "consistency")}


def test_system_means_match_table_3(shared_data):
    jset = judgments.load("summeval", shared_data)
    assert sorted(jset.systems()) == sorted(TABLE_3)
    off = set()
    for system, printed in TABLE_3.items():
        rows = [r for r in jset.rows if r.system == system]
        assert len(rows) == 100, system
        for dim, value in zip(DIMENSIONS, printed):
            mean = float(np.mean([r.scores[dim] for r in rows]))
            assert abs(mean - value) < 0.0134, (system, dim, mean, value)  # never more than one last digit off
            if round(mean, 2) != pytest.approx(value, abs=1e-9):
                off.add((system, dim))
    assert off == KNOWN_OFF_BY_ONE_DIGIT  # 63 of 64 printed cells exactly
