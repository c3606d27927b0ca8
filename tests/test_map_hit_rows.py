"""``map``: AP sums computed over the rows holding a hit only, against the formula over every row.

The sums of the rows without a hit are 0 whatever the formula; each other row must get the
same float64 bits as the formula over the whole matrix gives it (the per-user values are
written byte for byte by ``receval evaluate --per-user``), for contiguous hit matrices and
for the column slices ``hits[:, :k]`` a cutoff below the lists' width gives.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.metrics.ranking import _ap_sums, harmonic_tail


def _over_every_row(hits: np.ndarray, average: str, k: int | None) -> np.ndarray:
    """The formula as it was, over all rows."""
    ranks = np.arange(1, hits.shape[1] + 1, dtype=np.float64)
    precisions = np.cumsum(hits, axis=1, dtype=np.int32) / ranks
    if average == "ranks":
        return precisions.sum(axis=1) + hits.sum(axis=1) * harmonic_tail(hits.shape[1], int(k or 0))
    return (hits * precisions).sum(axis=1)


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 40),
    st.integers(1, 130),
    st.floats(0, 1),
    st.floats(0, 1),
    st.sampled_from(["positives", "ranks"]),
    st.integers(1, 140),
    st.integers(0, 2**32 - 1),
)
def test_hit_rows_only_give_the_same_bits(n_rows, width, rate, users_with_hits, average, cut, seed):
    rng = np.random.default_rng(seed)
    full = (rng.random((n_rows, width)) < rate) & (rng.random((n_rows, 1)) < users_with_hits)
    hits = full[:, :cut]  # a cutoff below the width: a strided view, as _hits gives it
    got = _ap_sums(hits, average, cut)
    expected = _over_every_row(hits, average, cut)
    assert got.dtype == np.float64
    assert got.tobytes() == expected.tobytes()


def test_a_run_of_few_hits_scores_as_by_hand():
    hits = np.zeros((4, 5), dtype=bool)
    hits[1, [0, 3]] = True  # P@1 = 1, P@4 = 2/4
    hits[3, 4] = True  # P@5 = 1/5
    assert _ap_sums(hits, "positives", 5).tolist() == [0.0, 1.5, 0.0, 0.2]
