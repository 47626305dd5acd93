"""The per-process memo of the neural metrics (metrics/memo.py): a bytes-bounded LRU, and handing freed heap
memory back to the system between batches."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from metrics.memo import BytesLRU, return_free_memory


def test_lru_evicts_least_recently_used_first_within_its_byte_limit():
    memo = BytesLRU(100, lambda a: a.nbytes)
    memo.put("a", np.zeros(5))  # 40 bytes
    memo.put("b", np.zeros(5))  # 80
    assert memo.get("a") is not None  # "a" is now the most recently used
    memo.put("c", np.zeros(5))  # 120 > 100: "b" goes, not "a"
    assert memo.get("b") is None and memo.get("a") is not None and memo.get("c") is not None
    assert memo.size == 80 and len(memo) == 2
    memo.put("huge", np.zeros(20))  # larger than the whole limit: not kept, nothing evicted
    assert memo.get("huge") is None and len(memo) == 2
    memo.put("a", np.zeros(1))  # a key already held keeps its first value
    assert memo.get("a").shape == (5,)
    memo.clear()
    assert len(memo) == 0 and memo.size == 0
    with pytest.raises(ValueError):
        BytesLRU(-1, len)


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                    reason="malloc_trim is glibc's")
def test_freed_heap_memory_goes_back_to_the_system():
    # 200,000 blocks of 2 kB (above pymalloc's 512 bytes: glibc's heap), then free all but every 1,000th, which pins
    # the heap so that glibc's own trimming of the heap top cannot return the freed memory in between
    blocks = [bytes(2048) for _ in range(200_000)]
    kept = blocks[::1000]
    del blocks
    before = _rss_mb()
    return_free_memory()
    after = _rss_mb()
    assert before - after > 150, (before, after)  # about 400 MB were freed
    assert len(kept) == 200
