"""Shared fixtures: where the real judgment data lives (../shared/judgments, never copied into the repo)."""
from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared" / "judgments"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED / "chaganty" / "lqual.jsonl.gz").exists():
        pytest.skip(f"real judgment data not found at {SHARED}")
    return SHARED


TINY_WORDS = ("the a an of to in and is was it he she they cat dog sat on mat barack obama paris france "
              "president visited city yesterday john smith london won game team big small house red blue "
              "[unused0] quick brown fox jumps over lazy who what where when answer question").split()


def make_tiny_bert(folder, head: str = "base", seed: int = 0, max_position: int = 64):
    """Save a tiny randomly initialised BERT (``head``: base, mlm or qa) with a fast tokenizer to ``folder``.

    For testing the plumbing of the neural metrics offline: real loading code, random weights.
    """
    import torch
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM, BertForQuestionAnswering, BertModel

    folder.mkdir(parents=True, exist_ok=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "!", "?", "'", "-", "##s", "##ed", "##ing",
             "##er", *TINY_WORDS]
    (folder / "vocab.txt").write_text("\n".join(dict.fromkeys(vocab)) + "\n", encoding="utf-8")
    tokenizer = AutoTokenizer.from_pretrained(str(folder), tokenizer_type="bert", do_lower_case=True,
                                              model_max_length=max_position)
    tokenizer.save_pretrained(folder)
    config = BertConfig(vocab_size=len(dict.fromkeys(vocab)), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=max_position)
    torch.manual_seed(seed)
    cls = {"base": BertModel, "mlm": BertForMaskedLM, "qa": BertForQuestionAnswering}[head]
    cls(config).save_pretrained(folder)
    return folder
