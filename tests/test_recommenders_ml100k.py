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
