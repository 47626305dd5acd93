"""The texts and printed scores of Table 1 of the SMS paper (Clark, Celikyilmaz & Smith, ACL 2019), shared by the tests
that reproduce it (tests/test_rouge_coco.py for ROUGE-L, tests/test_sms_table1.py for WMS, SMS and S+WMS).

The texts are as printed there (shared/seeds/001_*.txt: lower-cased and tokenized), the passage preceded by the
dateline tokens "( cnn )" that start the CNN/DailyMail source texts: with them the COCO ROUGE-L gives the printed
values to the digit (tests/test_rouge_coco.py).
"""
from __future__ import annotations

__all__ = ["PASSAGE", "SUMMARIES", "LABELS", "PRINTED"]

PASSAGE = ("( cnn ) the only thing crazier than a guy in snowbound massachusetts boxing up the powdery white stuff and "
           "offering it for sale online ? people are actually buying it . for $ 89 , self-styled entrepreneur kyle "
           "waring will ship you 6 pounds of boston-area snow in an insulated styrofoam box \u2013 enough for 10 to "
           "15 snowballs , he says .")

# the human summary, its clauses rearranged ("Word order") and repeated ("Repetition")
SUMMARIES = (
    "a man in suburban boston is selling snow online to customers in warmer states . for $ 89 , he will ship 6 "
    "pounds of snow in an insulated styrofoam box .",
    "in suburban boston , a man is selling snow online to customers in warmer states . he will ship 6 pounds of "
    "snow in an insulated styrofoam box for $ 89 .",
    "a man in suburban boston is selling snow is selling snow online to customers in warmer states in warmer "
    "states . for $ 89 , he will ship he will ship 6 pounds 6 pounds of snow in an insulated styrofoam box in a "
    "styrofoam box .",
)
LABELS = ("human summary", "word order", "repetition")

# the printed scores of the three summaries: ROUGE-L x 100, the mover similarities x 1000 (the paper's footnote 1)
PRINTED = {
    "rougeL": (39.30, 31.44, 35.07),
    "wms": (57.85, 57.85, 57.31),
    "sms": (99.98, 99.98, 89.40),
    "s+wms": (24.06, 24.06, 22.81),
}
