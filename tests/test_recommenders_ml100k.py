"""MovieLens 100K, 80/20 holdout: RMSE of the rating predictors (skips without the data)."""

from __future__ import annotations

import numpy as np
import pytest

from receval.data import load
from receval.recommenders import make
from receval.split import holdout

pytestmark = pytest.mark.realdata

MODELS = {
    "global mean": ("global-mean", {}),
    "biases": ("biases", {}),
    "UB (pearson, k=50)": ("user-knn", {"k": 50, "similarity": "pearson"}),
    "IB (pearson, k=50)": ("item-knn", {"k": 50, "similarity": "pearson"}),
    "MF (50 factors)": ("mf", {"factors": 50, "seed": 0}),
}


def test_ml100k_rmse_table(ml100k_dir):
    train, test = holdout(load(ml100k_dir, "movielens-100k"), test_fraction=0.2, seed=0)
    truth = test.ratings.astype(np.float64)
    rmse = {}
    for label, (name, params) in MODELS.items():
        pred = make(name, **params).fit(train).predict(test.users, test.items)
        rmse[label] = float(np.sqrt(np.mean((pred - truth) ** 2)))
    print("\nML-100K 80/20 holdout (seed 0), RMSE on", len(test), "test ratings")
    for label, value in rmse.items():
        print(f"  {label:<20} {value:.4f}")
    mean = rmse.pop("global mean")
    assert 1.05 < mean < 1.2  # the usual ~1.12 on ML-100K
    assert all(value < mean - 0.1 for value in rmse.values()), rmse  # every CF model beats the global mean
    assert rmse["MF (50 factors)"] < 0.96 and rmse["IB (pearson, k=50)"] < 0.96


# Built-in algorithms that are not personalised top-N recommenders: baselines whose
# ranking is the same for every user, and online learners for the cyclic simulator
# (they need the simulator's threshold, so they have no one-shot default).
NOT_PERSONALISED = ("random", "popularity", "average", "global-mean", "biases")
ONLINE_ONLY = (
    "item-bandit-egreedy",
    "item-bandit-ucb",
    "item-bandit-ts",
    "im-item-bandit-egreedy",
    "im-item-bandit-ucb",
    "im-item-bandit-ts",
    "knn-bandit",
)
# Sequential baselines: they predict the next item from the end of a history (tests/test_sequential_ml100k.py)
SEQUENTIAL = ("markov", "sknn")


def _u1(folder):
    import pandas as pd

    from receval import Interactions

    columns = ["user", "item", "rating", "timestamp"]
    base = pd.read_csv(folder / "u1.base", sep="\t", names=columns)
    test = pd.read_csv(folder / "u1.test", sep="\t", names=columns)
    data = Interactions.from_frame(pd.concat([base, test], ignore_index=True), rating="rating", name="ml-100k u1")
    return data.subset(np.arange(len(base))), data.subset(np.arange(len(base), data.n_ratings))


def test_default_topn_lists_beat_popularity_on_u1(ml100k_dir):
    from receval.errors import ConfigError
    from receval.evaluation import evaluate_model
    from receval.recommenders.registry import ALGORITHMS

    personalised = [name for name in ALGORITHMS if name not in NOT_PERSONALISED + ONLINE_ONLY + SEQUENTIAL]
    # a new algorithm must be placed in a group
    assert personalised == ["user-knn", "item-knn", "mf", "hkv", "ease", "slim", "p3alpha", "rp3beta", "ials"]
    for name in ONLINE_ONLY:
        with pytest.raises(ConfigError, match="threshold"):
            make(name).fit(_u1(ml100k_dir)[0])
    train, test = _u1(ml100k_dir)
    table = {}
    for name in ("popularity", *personalised):
        result = evaluate_model(make(name), train, test, ["precision@10", "ndcg@10"], k=10, threshold=4, seed=0)
        table[name] = result.summary
    print("\nML-100K u1.base/u1.test, defaults, top-10 with training items excluded, λ = 4")
    for name, row in table.items():
        print(f"  {name:<12} P@10 {row['precision@10']:.4f}  nDCG@10 {row['ndcg@10']:.4f}")
    popularity = table.pop("popularity")["precision@10"]
    assert 0.20 < popularity < 0.24  # 0.222
    assert all(row["precision@10"] > popularity for row in table.values()), table
