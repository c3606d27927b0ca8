"""The shuffle test (Klenitskiy et al., RecSys 2024): the shuffle itself, the pairing, and MovieLens-100K."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from receval import Interactions
from receval.data.synthetic import generate
from receval.errors import ConfigError, DataError
from receval.evaluation import evaluate_model
from receval.recommenders import make
from receval.split import leave_one_out
from receval.studies.shuffle import shuffle_histories, shuffle_test


def test_the_shuffle_permutes_within_users_only_and_is_seeded():
    data = generate(30, 40, 600, seed=2)
    a, b, c = shuffle_histories(data, 7), shuffle_histories(data, 7), shuffle_histories(data, 8)
    assert np.array_equal(a.timestamps, b.timestamps) and not np.array_equal(a.timestamps, c.timestamps)
    assert np.array_equal(a.users, data.users) and np.array_equal(a.items, data.items)
    for u in range(data.n_users):  # every user keeps their timestamps, reassigned among their rows
        mine = data.users == u
        assert sorted(a.timestamps[mine]) == sorted(data.timestamps[mine])
    assert not np.array_equal(a.timestamps, data.timestamps)


def test_every_order_of_a_users_history_is_equally_likely():
    # one user, 3 items at t = 1, 2, 3: 6 orders, each drawn about 1/6 of the time (chi-square)
    data = Interactions.from_ids(["u"] * 3, ["x", "y", "z"], [1.0] * 3, timestamps=[1, 2, 3])
    orders = [tuple(np.argsort(shuffle_histories(data, s).timestamps)) for s in range(1200)]
    counts = pd.Series(orders).value_counts()
    assert len(counts) == 6
    assert stats.chisquare(counts.to_numpy()).pvalue > 0.001


def test_the_pairing_equals_two_runs_and_scipys_test():
    data = generate(60, 50, 1500, seed=3).deduplicate("last")
    train, test = leave_one_out(data, "last", seed=0)
    res = shuffle_test(make("markov"), train, test, ["ndcg@10", "hr@10"], seed=4, threshold=0)
    true = evaluate_model(make("markov"), train, test, ["ndcg@10", "hr@10"], threshold=0, seed=4)
    shuffled = evaluate_model(make("markov"), shuffle_histories(train, 4), test, ["ndcg@10"], threshold=0, seed=4)
    assert res.true == true.summary and res.shuffled["ndcg@10"] == shuffled.summary["ndcg@10"]
    a, b = true.per_user["ndcg@10"].to_numpy(), shuffled.per_user["ndcg@10"].to_numpy()
    assert res.difference["ndcg@10"] == pytest.approx(np.mean(a - b))
    assert res.tests["ndcg@10"].pvalue == pytest.approx(stats.ttest_rel(a, b).pvalue)
    wilcoxon = shuffle_test(make("markov"), train, test, "ndcg@10", seed=4, threshold=0, test_name="wilcoxon")
    assert wilcoxon.test == "wilcoxon" and wilcoxon.difference["ndcg@10"] == res.difference["ndcg@10"]
    assert 0 < wilcoxon.tests["ndcg@10"].pvalue <= 1


def test_refusals():
    flat = Interactions.from_ids(["a", "a"], ["x", "y"], [1.0, 1.0])
    with pytest.raises(DataError, match="has no timestamps"):
        shuffle_histories(flat)
    data = generate(10, 10, 60, seed=0)
    with pytest.raises(ConfigError, match="test_name must be one of"):
        shuffle_test(make("markov"), data, data, "hr@5", test_name="t")


def test_ml100k_is_sequential_for_markov(ml100k_dir):
    frame = pd.read_csv(ml100k_dir / "u.data", sep="\t", names=["user", "item", "rating", "timestamp"])
    data = Interactions.from_frame(frame, rating="rating", timestamp="timestamp", name="ml-100k")
    train, test = leave_one_out(data, "last", seed=0)
    res = shuffle_test(make("markov"), train, test, ["ndcg@10", "hr@10"], seed=0, threshold=0)
    print(f"\nML-100K leave-last-out, markov: true {res.true}, shuffled {res.shuffled}, p {res.tests['ndcg@10']}")
    assert res.difference["ndcg@10"] > 0 and res.tests["ndcg@10"].pvalue < 0.01
