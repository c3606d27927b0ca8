"""The training rows of the evaluated users are the same rows whether or not some evaluated user has none.

:func:`receval.evaluation.align.align` picks each evaluated user's row of the training matrix, an empty
row for a user without training data (a cold user). A user's row must be the same arrays either way:
every stored rating (a 0 on a 0..5 scale too), columns sorted. Built once as a scipy product with a
diagonal matrix, a zero rating vanished from every profile as soon as one evaluated user was cold
(scipy's product drops zeros) and the columns came out reversed (a profile's sums then rounded
otherwise); the per-user values of profile metrics changed with an unrelated user.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from receval.evaluation import evaluate
from receval.evaluation.align import align


def _frames(seed: int = 3) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    pairs = pd.DataFrame({"user": rng.integers(0, 25, 400), "item": rng.integers(0, 40, 400)})
    pairs = pairs.drop_duplicates(["user", "item"]).reset_index(drop=True)
    pairs["rating"] = rng.integers(0, 6, len(pairs)).astype(float)  # zeros are ratings (scale 0..5)
    held = rng.random(len(pairs)) < 0.3
    train, truth = pairs[~held], pairs[held]
    recs = pd.DataFrame(
        [(u, i, 1.0 / (r + 1)) for u in truth.user.unique() for r, i in enumerate(rng.permutation(40)[:10])],
        columns=["user", "item", "score"],
    )
    aspects = pd.DataFrame({"item": np.arange(40).repeat(2), "aspect": rng.integers(0, 5, 80).astype(str)})
    return train, truth, recs, aspects.drop_duplicates()


def _with_cold_user(recs: pd.DataFrame, truth: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The lists and truth plus user 99, who has no training row; its items are the truth's (same catalogue)."""
    items = truth.item.unique()[:5]
    cold_truth = pd.DataFrame({"user": 99, "item": items, "rating": 5.0})
    cold_recs = pd.DataFrame({"user": 99, "item": items[::-1], "score": np.arange(5, 0, -1) / 5})
    return pd.concat([recs, cold_recs], ignore_index=True), pd.concat([truth, cold_truth], ignore_index=True)


def test_a_cold_user_leaves_the_others_training_rows_unchanged():
    train, truth, recs, _ = _frames()
    assert (train.rating == 0).any()
    warm = align(recs, truth, train=train)
    cold = align(*_with_cold_user(recs, truth), train=train)
    assert cold.train_rows is not None and warm.train_rows is not None and warm.train_all is not None
    assert np.diff(cold.train_rows.indptr)[-1] == 0  # user 99: an empty row
    n = warm.train_rows.shape[0]
    assert np.array_equal(np.diff(cold.train_rows.indptr)[:n], np.diff(warm.train_rows.indptr))
    for name in ("indices", "data"):
        assert np.array_equal(getattr(cold.train_rows, name), getattr(warm.train_rows, name))
    assert (warm.train_rows.data == 0).any()  # the zero ratings are stored ...
    # ... and each row holds every training rating of its user (the pairs are unique), columns sorted
    per_user = np.bincount(warm.train.users, minlength=warm.train.n_users)
    rows = [int(np.flatnonzero(warm.train.user_ids == u)[0]) for u in warm.user_ids]
    assert np.array_equal(np.diff(warm.train_rows.indptr), per_user[rows])
    starts, stops = warm.train_rows.indptr[:-1], warm.train_rows.indptr[1:]
    assert all((np.diff(warm.train_rows.indices[a:b]) > 0).all() for a, b in zip(starts, stops, strict=True))


def test_profile_metrics_of_a_user_do_not_depend_on_a_cold_user():
    train, truth, recs, aspects = _frames()
    metrics = ["miscalibration@10", "miscalibration@10(weighting=rank)", "serendipity@10", "ab_ndcg@10"]
    warm = evaluate(recs, truth, metrics, train=train, aspects=aspects, threshold=3).per_user
    cold = evaluate(*_with_cold_user(recs, truth), metrics, train=train, aspects=aspects, threshold=3).per_user
    cold = cold[cold["user"] != 99].reset_index(drop=True)
    assert len(cold) == len(warm) > 10
    for metric in metrics:  # the same bits, not merely close
        a, b = warm[metric].to_numpy(), cold[metric].to_numpy()
        assert np.array_equal(a, b, equal_nan=True), metric
    assert warm["miscalibration@10"].notna().sum() > 10  # not vacuous: most users have a value
