"""The sampled-against-full study: a hand-made example, an independent recomputation, the papers' properties."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from receval.data.interactions import Interactions
from receval.data.synthetic import generate
from receval.errors import ConfigError
from receval.recommenders import make
from receval.split import split_by_name
from receval.studies.sampled import sampled_study


class Fixed:
    """A stand-in model: a fixed score table (users x items)."""

    def __init__(self, table):
        self.table = np.asarray(table, dtype=np.float64)

    def fit(self, train):
        return self

    def score(self, users):
        return self.table[np.asarray(users)]


def _hand_made():
    """Users 0-2 train on items 0 and 1 and each hold out one item (2, 3, 4); user 3 rates items 2-5 in training."""
    users = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3]
    items = [0, 1, 2, 0, 1, 3, 0, 1, 4, 2, 3, 4, 5]
    test = np.array([False, False, True, False, False, True, False, False, True, False, False, False, False])
    data = Interactions.from_arrays(users, items, np.full(len(users), 4.0))
    table = np.array(
        [
            [9, 9, 5, 1, 1, 1],  # item 2 above the user's negatives 3, 4, 5: full rank 1 of 4
            [9, 9, 5, 0, 5, 5],  # item 3 below 2, 4, 5: rank 4
            [9, 9, 1, 7, 3, 0],  # item 4 below 3 only: rank 2
            [0, 0, 0, 0, 0, 0],
        ]
    )
    return (data.subset(~test), data.subset(test)), table


def _ndcg(ranks, k=10):
    ranks = np.asarray(ranks, dtype=float)
    return float(np.mean(np.where(ranks <= k, 1 / np.log2(ranks + 1), 0.0)))


def test_hand_made_full_values_and_a_sample_of_every_negative():
    split, table = _hand_made()
    systems = {"a": Fixed(table), "reversed": Fixed(-table)}  # reversed: full ranks 4, 1 and 3
    study = sampled_study(split, systems, n=3, repeats=2, metrics=["ndcg@10", "recall@1"], corrections=["none"])
    frame = study.to_frame().set_index(["system", "metric"])
    assert frame.loc[("a", "ndcg@10"), "full"] == pytest.approx(_ndcg([1, 4, 2]))
    assert frame.loc[("reversed", "ndcg@10"), "full"] == pytest.approx(_ndcg([4, 1, 3]))
    assert frame.loc[("a", "recall@1"), "full"] == pytest.approx(1 / 3)
    # three negatives are every item a user could be shown: the sample is the whole list, sampled = full
    assert np.allclose(frame["mean"], frame["full"]) and np.allclose(frame["std"], 0)
    kendall = study.kendall.set_index(["metric", "estimate"])
    assert kendall.loc[("ndcg@10", "sampled"), "kendall_tau"] == 1.0
    assert np.isnan(kendall.loc[("recall@1", "sampled"), "kendall_tau"])  # both systems 1/3 in full: no ranking


def test_hand_made_one_negative():
    split, table = _hand_made()
    study = sampled_study(split, {"a": Fixed(table)}, n=1, repeats=30, metrics=["recall@1"], corrections=["none"])
    values = study.values["value"].to_numpy()
    # user 0 always first, user 1 always second, user 2 first unless its one negative is item 3 (1 in 3)
    assert set(np.round(values * 3).astype(int)) <= {1, 2}
    share = np.mean(np.isclose(values, 2 / 3))
    assert 0.4 < share < 0.95  # P = 2/3 per sample; 30 samples
    assert study.values["full"].unique().tolist() == pytest.approx([1 / 3])


@pytest.fixture(scope="module")
def generated():
    return generate(n_users=150, n_items=600, n_ratings=12000, n_aspects=0, user_activity_sigma=0.5, seed=7)


def test_sampled_values_recomputed_from_the_recorded_samples(generated):
    """Every system is ranked against the same candidates, drawn with the seeds the study records."""
    from receval.evaluation.candidates import draw_candidates
    from receval.recommenders import clone

    study = sampled_study(generated, ["popularity", "mf"], n=40, repeats=3, metrics=["ndcg@10"],
                          corrections=["none"], seed=5)  # fmt: skip
    train, test = split_by_name(generated, "loo", seed=5)[0]
    seeds = study.conventions["sample"]["seeds"]
    assert len(set(seeds)) == 3
    for name in ("popularity", "mf"):
        model = clone(make(name), seed=5).fit(train)
        for repeat, seed in enumerate(seeds):
            cands = draw_candidates(train, test, 40, seed=seed)
            scores = np.asarray(model.score(cands.users), dtype=np.float64)
            rows = np.arange(len(cands.users))
            positive = scores[rows, cands.items]
            negative = np.take_along_axis(scores, cands.negatives.astype(np.int64), axis=1)
            ranks = 1 + (negative >= positive[:, None]).sum(axis=1)  # ties count above: pessimistic
            v = study.values
            got = v.loc[(v["system"] == name) & (v["repeat"] == repeat), "value"].item()
            assert got == pytest.approx(_ndcg(ranks))


def test_sampled_and_bv_values_are_those_of_evaluate_sampled_on_the_same_candidates(generated):
    from receval.evaluation.candidates import draw_candidates
    from receval.evaluation.sampled import evaluate_sampled
    from receval.recommenders import clone

    study = sampled_study(generated, ["item-knn", "popularity"], n=30, repeats=2, corrections=["none", "bv"], seed=4)
    train, test = split_by_name(generated, "loo", seed=4)[0]
    n_items = study.conventions["mean_full_list"]
    v = study.values
    for repeat, seed in enumerate(study.conventions["sample"]["seeds"]):
        cands = draw_candidates(train, test, 30, seed=seed)
        for name in ("item-knn", "popularity"):
            model = clone(make(name), seed=4).fit(train)
            metrics = ["ndcg@10(sampled=30)", "recall@10(sampled=30,correction=bv)"]
            result = evaluate_sampled(model, train, test, metrics, candidates=cands, fitted=True, threshold=1)
            assert result.conventions.sampled[metrics[0]]["n_items"] == pytest.approx(n_items, abs=0.5)
            mine = v[(v.system == name) & (v.repeat == repeat)].set_index(["metric", "estimate"])["value"]
            assert mine[("ndcg@10", "sampled")] == pytest.approx(result.summary[metrics[0]], abs=1e-12)
            assert mine[("recall@10", "bv")] == pytest.approx(result.summary[metrics[1]], abs=1e-9)


def test_full_value_is_the_full_catalogue_metric_of_evaluate_model(generated):
    from receval.evaluation import evaluate_model

    study = sampled_study(generated, ["mf", "hkv"], n=20, repeats=1, corrections=["none"], seed=2)
    train, test = split_by_name(generated, "loo", seed=2)[0]
    frame = study.to_frame().set_index(["system", "metric"])
    for name in ("mf", "hkv"):
        # every held-out item relevant (threshold at the bottom of the scale), training items excluded
        result = evaluate_model(make(name), train, test, ["ndcg@10", "recall@10"], threshold=1, seed=2)
        for metric in ("ndcg@10", "recall@10"):
            assert frame.loc[(name, metric), "full"] == pytest.approx(result.summary[metric], abs=1e-9)


def test_to_frame_and_kendall_agree_with_the_values(generated):
    study = sampled_study(generated, ["popularity", "item-knn", "random"], n=50, repeats=4,
                          corrections=["none", "bv"], seed=1)  # fmt: skip
    v = study.values
    frame = study.to_frame()
    for r in frame.itertuples():
        rows = v[(v.system == r.system) & (v.metric == r.metric) & (v.estimate == r.estimate)]
        assert len(rows) == 4
        assert r.mean == pytest.approx(rows["value"].mean())
        assert r.std == pytest.approx(np.std(rows["value"], ddof=1))
        assert r.mae == pytest.approx(np.abs(rows["value"] - r.full).mean())
    from scipy.stats import kendalltau

    for r in study.kendall.itertuples():
        rows = v[(v.metric == r.metric) & (v.estimate == r.estimate)]
        taus = []
        for _, sample in rows.groupby("repeat"):
            taus.append(kendalltau(sample["value"], sample["full"]).statistic)
        assert r.kendall_tau == pytest.approx(np.nanmean(taus))
        assert r.mse == pytest.approx(np.mean((rows["value"] - rows["full"]) ** 2))
    summary = json.loads(study.to_json())
    assert summary["metric"] == "ndcg@10" and set(summary["kendall_tau"]) == {"sampled", "bv"}


def test_same_seed_same_study_and_another_seed_other_samples(generated):
    kwargs = {"n": 30, "repeats": 2, "metrics": ["recall@10"], "corrections": ["none"]}
    a = sampled_study(generated, ["popularity", "random"], seed=3, **kwargs)
    b = sampled_study(generated, ["popularity", "random"], seed=3, **kwargs)
    c = sampled_study(generated, ["popularity", "random"], seed=4, **kwargs)
    pd.testing.assert_frame_equal(a.values, b.values)
    assert a.conventions["sample"]["seeds"] != c.conventions["sample"]["seeds"]


def test_per_user_samples_and_a_holdout_split(generated):
    study = sampled_study(generated, ["popularity", "item-knn"], n=30, repeats=2, shape="per-user",
                          split="per-user", test_fraction=0.2, corrections=["none", "ls"])  # fmt: skip
    assert study.conventions["sample"]["shape"] == "per-user"
    assert study.conventions["test_items"] > generated.n_users  # several test items per user
    assert set(study.values["estimate"]) == {"sampled", "ls"}


def test_corrections_are_closer_to_full_than_the_sampled_metric(generated):
    """Krichene & Rendle (KDD 2020): over 20 samples, the corrected Recall@10 and nDCG@10 have a lower squared
    error against the full value than the uncorrected sampled metric, for each system."""
    systems = ["popularity", "item-knn", "user-knn", "mf"]
    study = sampled_study(generated, systems, n=50, repeats=20, corrections=["none", "bv", "ls"], seed=0)
    frame = study.to_frame().set_index(["system", "metric", "estimate"])
    for system in systems:
        for metric in ("recall@10", "ndcg@10"):
            uncorrected = frame.loc[(system, metric, "sampled"), "mse"]
            assert frame.loc[(system, metric, "bv"), "mse"] < uncorrected, (system, metric)


def test_sampled_hit_ratio_with_a_tiny_sample_ranks_systems_as_auc(generated):
    """Krichene & Rendle: as the sample shrinks, a sampled metric ranks systems as AUC does."""
    systems = ["popularity", "item-knn", "user-knn", "mf", "random", "hkv"]
    study = sampled_study(generated, systems, n=4, repeats=20, metrics=["recall@1", "auc"],
                          corrections=["none"], seed=0)  # fmt: skip
    frame = study.to_frame()
    hit = frame[frame.metric == "recall@1"].set_index("system")["mean"]
    auc = frame[frame.metric == "auc"].set_index("system")["full"].reindex(hit.index)
    full_hit = frame[frame.metric == "recall@1"].set_index("system")["full"]
    from scipy.stats import kendalltau

    tau_sampled = kendalltau(hit, auc).statistic
    assert tau_sampled >= kendalltau(full_hit, auc).statistic
    assert tau_sampled >= 0.6


def test_bad_arguments_fail_before_any_fit(generated):
    class Exploding(Fixed):
        def fit(self, train):
            raise AssertionError("fitted")

    model = {"x": Exploding(np.zeros((1, 1)))}
    for kwargs, words in [
        ({"n": 0}, "n=0"),
        ({"repeats": 0}, "repeats=0"),
        ({"sampling": "popularity", "corrections": ["mle"]}, "uniformly sampled"),
        ({"metrics": ["rmse"]}, "no sampled form"),
        ({"n": 10_000}, "user"),
        ({"split": "kfold"}, "several folds"),
    ]:
        with pytest.raises((ConfigError, ValueError), match=words):
            sampled_study(generated, model, **kwargs)


def test_sampled_protocol_in_the_runner(tmp_path):
    """Each task is one recommender; every recommender of the grid is ranked against the same samples."""
    from receval.experiment import ResultStore, run_experiment

    config = tmp_path / "sampled.toml"
    config.write_text(
        """\
name = "sampled"
seeds = [0]
metrics = ["ndcg@10", "recall@10"]

[datasets.toy]
generate = { n_users = 120, n_items = 400, n_ratings = 5000, n_aspects = 0, user_activity_sigma = 0.5, seed = 2 }

[split]
method = "loo-random"

[protocol]
name = "sampled"
n = 40
repeats = 3
corrections = ["none", "bv"]

[recommenders.popularity]
[recommenders.item-knn]
"""
    )
    report = run_experiment(config, out=tmp_path / "out")
    assert (report.ok, report.failed) == (2, 0)
    store = ResultStore(tmp_path / "out")
    aggregates = store.read("aggregates").merge(store.read("tasks")[["task_id", "recommender"]], on="task_id")
    wanted = {f"{m}|{e}" for m in ("ndcg@10", "recall@10") for e in ("full", "sampled", "bv", "sampled|std", "bv|std")}
    assert wanted <= set(aggregates["metric"])
    # the same numbers as the study over both systems at once (the same split, seed and samples)
    from receval.data.synthetic import generate

    data = generate(n_users=120, n_items=400, n_ratings=5000, n_aspects=0, user_activity_sigma=0.5, seed=2)
    study = sampled_study(data, ["popularity", "item-knn"], n=40, repeats=3, corrections=["none", "bv"],
                          split="loo-random", seed=0)  # fmt: skip
    frame = study.to_frame().set_index(["system", "metric", "estimate"])
    stored = aggregates.set_index(["recommender", "metric"])["value"]
    for system in ("popularity", "item-knn"):
        assert stored[(system, "ndcg@10|full")] == pytest.approx(frame.loc[(system, "ndcg@10", "bv"), "full"])
        assert stored[(system, "recall@10|bv")] == pytest.approx(frame.loc[(system, "recall@10", "bv"), "mean"])
