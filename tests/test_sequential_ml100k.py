"""``markov`` and ``sknn`` on MovieLens-100K's leave-last-out: next-item baselines that beat popularity.

MovieLens ratings are entered in bursts in time order, so the last rated film follows the previous ones
(Klenitskiy et al., RecSys 2024, find ML-1M strongly sequential by their shuffle test); both sequential
baselines must beat the most-popular list there, the usual sanity check of a next-item protocol.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from receval import Interactions
from receval.evaluation import evaluate_model
from receval.recommenders import make
from receval.split import leave_one_out


def test_sequential_baselines_beat_popularity_on_ml100k_leave_last_out(ml100k_dir):
    frame = pd.read_csv(ml100k_dir / "u.data", sep="\t", names=["user", "item", "rating", "timestamp"])
    data = Interactions.from_frame(frame, rating="rating", timestamp="timestamp", name="ml-100k")
    train, test = leave_one_out(data, "last", seed=0)
    table = {}
    for name, params in (("popularity", {}), ("markov", {}), ("sknn", {}), ("sknn", {"weighting": "linear"})):
        result = evaluate_model(make(name, **params), train, test, ["hr@10", "ndcg@10"], k=10, threshold=0, seed=0)
        table[f"{name} {params or ''}".strip()] = result.summary
    print("\nML-100K leave-last-out (943 users), top-10, training items excluded")
    for label, row in table.items():
        print(f"  {label:<30} HR@10 {row['hr@10']:.4f}  nDCG@10 {row['ndcg@10']:.4f}")
    popularity = table.pop("popularity")["ndcg@10"]
    assert all(row["ndcg@10"] > popularity for row in table.values()), table
    assert np.isfinite(popularity)
