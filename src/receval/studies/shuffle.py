"""The shuffle test: does a data set have sequential structure at all?

Klenitskiy, Volodkevich, Vasilev & Alekseev, "Does It Look Sequential? An Analysis of
Datasets for Evaluation of Sequential Recommendations", RecSys 2024: train a sequential
model on the true training sequences and on the same sequences with each user's order
shuffled, evaluate both on the same test; a data set whose metrics do not drop has no
order for a sequential model to learn. :func:`shuffle_test` does that with any receval
model (``markov`` and ``sknn`` read the order), and pairs the two runs' per-user values
with a paired test of :mod:`receval.stats.significance`.

The shuffle permutes, within each user, which training item sits at which of the user's
timestamps (a uniform random permutation per user, from ``seed``): every user keeps their
items and their timestamps, only the order between them is lost; the test part is not
touched.

Examples
--------
>>> from receval.data.interactions import Interactions
>>> data = Interactions.from_ids(["a"] * 4 + ["b"] * 2, list("wxyzxy"), [1.0] * 6, timestamps=[1, 2, 3, 4, 1, 2])
>>> shuffled = shuffle_histories(data, seed=0)
>>> sorted(shuffled.timestamps[:4]) == [1, 2, 3, 4], shuffled.items.tolist() == data.items.tolist()
(True, True)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.evaluation import evaluate_model
from receval.metrics import Metric, MetricList
from receval.recommenders.base import clone
from receval.stats.significance import TESTS, PairedResult, TestName
from receval.validate import check_seed

__all__ = ["ShuffleResult", "shuffle_histories", "shuffle_test"]


@dataclass(frozen=True)
class ShuffleResult:
    """What :func:`shuffle_test` returns.

    Attributes
    ----------
    true, shuffled : dict
        ``{metric: value}`` of the model fitted on the true and on the shuffled histories.
    difference : dict
        ``{metric: true - shuffled}``, the mean over the users scored in both runs.
    tests : dict
        ``{metric: PairedResult}`` of ``test`` on the per-user values (true, shuffled).
    test : str
        The paired test's name.
    seed : int
        The shuffle's seed.
    """

    true: dict[str, float]
    shuffled: dict[str, float]
    difference: dict[str, float]
    tests: dict[str, PairedResult]
    test: str
    seed: int


def shuffle_histories(train: Interactions, seed: int = 0) -> Interactions:
    """``train`` with each user's items randomly reassigned to the user's timestamps (seeded).

    Returns
    -------
    Interactions
        The same rows (users, items, ratings) with the timestamps permuted within each user.
    """
    if train.timestamps is None:
        label = f"data set {train.name!r}" if train.name else "the training data"
        raise DataError(f"the shuffle test permutes each user's history in time, but {label} has no timestamps")
    check_seed(seed, "seed")
    rng = np.random.default_rng(seed)
    by_time = np.lexsort((train.timestamps, train.users))  # each user's rows in time order
    shuffled = np.lexsort((rng.random(train.n_ratings), train.users))  # each user's rows in random order
    times = np.empty_like(train.timestamps)
    times[shuffled] = train.timestamps[by_time]  # the j-th random row of a user takes the user's j-th time
    return train._derive(timestamps=times)


def shuffle_test(
    model: Any,
    train: Interactions,
    test: Interactions,
    metrics: MetricList | Sequence[str | Metric] | str,
    *,
    seed: int = 0,
    test_name: TestName = "ttest",
    k: int = 10,
    threshold: float | None = None,
    exclude_train: bool = True,
) -> ShuffleResult:
    """Fit ``model`` on the true and on the shuffled ``train``, evaluate both on ``test``, pair them per user.

    Parameters
    ----------
    model
        An unfitted model (cloned for each fit).
    train, test
        The split; ``train`` needs timestamps.
    metrics, k, threshold, exclude_train
        As for :func:`~receval.evaluation.evaluate_model` (``seed`` seeds the models too).
    seed
        The shuffle's seed.
    test_name
        ``ttest``, ``wilcoxon`` or ``permutation`` (:data:`receval.stats.significance.TESTS`).

    Returns
    -------
    ShuffleResult
        Both runs' metrics, their difference and the paired test of each per-user metric.

    Examples
    --------
    >>> from receval.data.interactions import Interactions
    >>> from receval.recommenders import make
    >>> users = [u for u in range(6) for _ in range(4)]
    >>> items = [(u + t) % 4 for u in range(6) for t in range(4)]  # each user walks 0 -> 1 -> 2 -> 3 -> 0
    >>> data = Interactions.from_ids(users, items, [1.0] * 24, timestamps=list(range(4)) * 6)
    >>> train, test = data.subset(np.arange(24)[np.arange(24) % 4 < 3]), data.subset(np.arange(3, 24, 4))
    >>> res = shuffle_test(make("markov"), train, test, "hr@1", k=1, exclude_train=False, seed=1)
    >>> res.true["hr@1"], res.shuffled["hr@1"] < 1.0
    (1.0, True)
    """
    if test_name not in TESTS:
        raise ConfigError(f"test_name must be one of {', '.join(TESTS)}, got {test_name!r}")
    shuffled = shuffle_histories(train, seed)
    runs = [
        evaluate_model(
            clone(model), data, test, metrics, k=k, threshold=threshold, seed=seed, exclude_train=exclude_train
        )
        for data in (train, shuffled)
    ]
    true, other = (run.per_user for run in runs)
    joined = true.merge(other, on="user", suffixes=("", "\0shuffled"))
    difference: dict[str, float] = {}
    tests: dict[str, PairedResult] = {}
    for label in runs[0].summary:
        if label not in true.columns:
            continue  # a system metric: no per-user pairs
        a, b = joined[label].to_numpy(dtype=np.float64), joined[label + "\0shuffled"].to_numpy(dtype=np.float64)
        both = ~(np.isnan(a) | np.isnan(b))
        difference[label] = float(np.mean(a[both] - b[both])) if both.any() else float("nan")
        tests[label] = TESTS[test_name](a[both], b[both])
    return ShuffleResult(
        true=dict(runs[0].summary),
        shuffled=dict(runs[1].summary),
        difference=difference,
        tests=tests,
        test=test_name,
        seed=seed,
    )
