"""Easy/difficult partitions by coherence and the five-model experiment (Said & Bellogín, UMUAI 2018, §5)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from receval.data.interactions import Interactions
from receval.data.synthetic import generate
from receval.errors import ConfigError, DataError
from receval.report.studies import plot_coherence_split
from receval.split import kfold_per_user
from receval.stats.coherence import coherence
from receval.studies.partitions import (
    MODELS,
    coherence_partitions,
    coherence_split_experiment,
    difficult_users,
)


def test_difficult_users_least_coherent_share():
    values = np.array([-0.2, -5.0, -1.0, np.nan, -3.0, -0.1])
    mask = difficult_users(values, 0.4)  # 5 defined users -> 2 difficult
    assert np.flatnonzero(mask).tolist() == [1, 4]
    assert not mask[3]
    # ties broken by user index
    assert np.flatnonzero(difficult_users(np.array([-1.0, -1.0, -1.0, 0.0]), 0.5)).tolist() == [0, 1]


@pytest.mark.parametrize("p", [0.0, 1.0, -0.1, 1.5, float("nan")])
def test_p_outside_open_interval(p):
    with pytest.raises(ConfigError, match="strictly between 0 and 1"):
        difficult_users(np.array([-1.0, -2.0, -3.0]), p)


def test_p_leaving_a_group_empty():
    with pytest.raises(DataError, match="empty"):
        difficult_users(np.array([-1.0, -2.0, -3.0]), 0.1)


def test_partitions_cover_the_data():
    rng = np.random.default_rng(0)
    train = Interactions.from_arrays(rng.integers(0, 10, 60), rng.integers(0, 8, 60), rng.integers(1, 6, 60))
    test = train.subset(np.arange(10))
    diff = np.arange(train.n_users) % 3 == 0
    parts = coherence_partitions(train, test, diff)
    assert len(parts["Tr_e"]) + len(parts["Tr_d"]) == len(train)
    assert len(parts["Te_e"]) + len(parts["Te_d"]) == len(test)
    assert diff[parts["Tr_d"].users].all() and not diff[parts["Tr_e"].users].any()


@pytest.fixture(scope="module")
def generated():
    return generate(n_users=150, n_items=200, n_ratings=9_000, noise=(0.1, 1.2), seed=4)


def _factories():
    from receval.recommenders import make

    return {"biases": lambda: make("biases"), "ib": lambda: make("item-knn", k=10, similarity="pearson")}


def test_five_model_experiment(generated, tmp_path):
    ps = (0.2, 0.5, 0.8)
    res = coherence_split_experiment(generated, _factories(), ps, folds=3, seed=1)
    table = res.table
    assert list(table.index) == [(r, p) for r in ("biases", "ib") for p in ps]
    assert (table["coverage"] == 1.0).all() and (table["n_undefined"] == 0).all()
    assert set(res.rmse.index.get_level_values("model")) == set(MODELS)
    # rating ratio grows with p; Avg with equal weights is the plain mean
    ratio = table.loc["biases", "rating_ratio"].to_numpy()
    assert np.all(np.diff(ratio) > 0) and 0 < ratio[0] < ratio[-1] < 1
    assert table["best"].isin(["All-Diff", "All-Easy", "Diff-Diff", "Easy-Easy"]).all()
    # users with noisier ratings are less coherent: the easy ones are predicted better
    assert (table["All-Easy"] < 0).all() and (table["All-Diff"] > 0).all()

    # oracle for the pooled All-All RMSE of the biases model: fit per fold, score every test rating
    from receval.recommenders import make

    sse = n = 0
    for train, test in kfold_per_user(generated, k=3, seed=1):
        pred = make("biases").fit(train).predict(test.users, test.items)
        sse += np.sum((pred - test.ratings) ** 2)
        n += len(test)
    assert table.loc[("biases", 0.5), "base_error"] == pytest.approx(np.sqrt(sse / n), rel=1e-6)

    # coherence was computed on each fold's training data: the difficult users differ from those of all data
    t6 = res.table6()
    assert list(t6.columns) == [
        "Rec",
        "p",
        "Base error",
        "All-Diff",
        "All-Easy",
        "Diff-Diff",
        "Easy-Easy",
        "Avg",
        "Rating ratio",
    ]
    assert t6.apply(lambda row: sum("▲" in str(v) for v in row), axis=1).eq(1).all()
    assert t6.apply(lambda row: sum("▼" in str(v) for v in row), axis=1).eq(1).all()
    plot_coherence_split(res, tmp_path / "fig.png")
    assert (tmp_path / "fig.png").stat().st_size > 10_000

    equal = coherence_split_experiment(
        generated, {"biases": _factories()["biases"]}, (0.5,), folds=3, seed=1, avg="equal"
    )
    row = equal.table.loc[("biases", 0.5)]
    assert row["Avg"] == pytest.approx((row["All-Easy"] + row["All-Diff"]) / 2)


def _aspects(data: Interactions) -> pd.DataFrame:
    return pd.DataFrame({"item": data.item_ids[data.aspects.tocoo().row], "aspect": data.aspects.tocoo().col})


def test_experiment_input_errors(generated):
    with pytest.raises(ConfigError, match="strictly between"):
        coherence_split_experiment(generated, _factories(), (0.5, 1.0))
    with pytest.raises(ConfigError, match="gamma"):
        coherence_split_experiment(generated, _factories(), (0.5,), gamma="var")
    dup = Interactions.from_frame(
        pd.concat([generated.to_frame(), generated.to_frame().head(5)]), item_aspects=_aspects(generated)
    )
    with pytest.raises(DataError, match="repeated"):
        coherence_split_experiment(dup, _factories(), (0.5,))
    assert np.isfinite(coherence(generated, "wstd").values).all()


def test_ratings_that_never_vary_are_refused_before_any_fit(generated, tmp_path, capsys):
    from receval.cli import main

    flat = generated.to_frame().assign(rating=3.0)
    data = Interactions.from_frame(flat, item_aspects=_aspects(generated))
    with pytest.raises(DataError, match="every rating is 3: no coherence tells users apart"):
        coherence_split_experiment(data, _factories(), (0.5,), folds=2)
    path, aspects = tmp_path / "flat.csv", tmp_path / "aspects.csv"
    flat[["user", "item", "rating"]].to_csv(path, index=False)
    _aspects(generated).to_csv(aspects, index=False)
    argv = ["coherence-split", "--data", str(path), "-f", "csv", "--aspects", str(aspects), "--folds", "2"]
    assert main(argv) == 2  # the table was all nan
    err = capsys.readouterr().err
    assert err.startswith("error: every rating is 3") and err.count("\n") == 1, err
