"""The protocols study (receval.studies.protocols, ``receval protocols-study``): hand-checkable facts."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from receval.cli import main
from receval.data.interactions import Interactions
from receval.data.synthetic import generate
from receval.errors import ConfigError, DataError
from receval.split import leave_one_out
from receval.stats.leakage import audit
from receval.studies.protocols import global_after_test, kendall_pairs, protocols_study

_FAST = {"protocols": ["random", "loo", "temporal", "rolling"], "cores": [0, 3], "metrics": ["ndcg@10"], "windows": 2}


@pytest.fixture(scope="module")
def data() -> Interactions:
    return generate(n_users=50, n_items=40, n_ratings=1000, seed=5)  # with timestamps


@pytest.fixture(scope="module")
def study(data):
    return protocols_study(data, ["popularity", "item-knn", "random"], **_FAST)


def test_a_global_cut_and_rolling_windows_never_train_after_a_test_event(study):
    timed = study.settings[study.settings["protocol"].isin(["temporal", "rolling"])]
    assert len(timed) == 4
    assert (timed["train_after_test"] == 0).all() and (timed["global_after_test"] == 0).all()
    random = study.settings[study.settings["protocol"] == "random"]
    assert (random["train_after_test"] > 0).all() and (random["global_after_test"] > 0).all()


def test_leave_last_out_leaks_only_through_other_users(data, study):
    loo = study.settings[(study.settings["protocol"] == "loo") & (study.settings["core"] == 0)].iloc[0]
    train, test = leave_one_out(data, "last", seed=0)
    assert loo["train_after_test"] == audit(train, test).train_after_test == 0.0
    # the global figure by a plain loop: per test user, the share of all training rows after its test time
    times = train.timestamps
    shares = [np.mean(times > test.timestamps[test.users == u].min()) for u in np.unique(test.users)]
    assert loo["global_after_test"] == pytest.approx(np.mean(shares)) and loo["global_after_test"] > 0


def test_global_after_test_by_hand():
    d = Interactions.from_arrays([0, 0, 1, 1, 1], [0, 1, 0, 1, 2], [1] * 5, timestamps=[1, 5, 2, 3, 4])
    train, test = d.subset(np.array([1, 0, 1, 0, 1], bool)), d.subset(np.array([0, 1, 0, 1, 0], bool))
    # user 0 tested at 5: none of the training times 1, 2, 4 later; user 1 at 3: one of three (4)
    assert global_after_test(train, test) == pytest.approx((0 + 1 / 3) / 2)


def test_tau_is_one_for_identical_rankings_and_scipys_otherwise():
    v = pd.DataFrame({"protocol": ["a"] * 4 + ["b"] * 4 + ["c"] * 4, "core": 0, "algorithm": list("wxyz") * 3,
                      "metric": "m", "value": [1, 2, 3, 4, 10, 20, 30, 40, 4, 1, 3, 2.0]})  # fmt: skip
    tau = kendall_pairs(v).set_index(["protocol_a", "protocol_b"])["tau"]
    assert tau["a", "b"] == 1.0
    assert tau["a", "c"] == pytest.approx(stats.kendalltau([1, 2, 3, 4], [4, 1, 3, 2]).statistic)


def test_study_taus_are_those_of_its_values(study):
    grid = study.table("ndcg@10")
    for row in study.kendall.itertuples():
        a, b = grid[f"{row.protocol_a}/{row.core_a}"], grid[f"{row.protocol_b}/{row.core_b}"]
        assert row.tau == pytest.approx(stats.kendalltau(a, b).statistic, nan_ok=True)
    assert len(study.kendall) == 8 * 7 // 2  # every pair of the 4 x 2 settings once


def test_cli_and_python_give_the_same_numbers(data, study, tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"user": data.user_ids[data.users], "item": data.item_ids[data.items], "rating": data.ratings,
                  "timestamp": data.timestamps}).to_csv(path, index=False)  # fmt: skip
    args = ["protocols-study", str(path), "--algorithms", "popularity,item-knn,random", "--cores", "0,3",
            "--metrics", "ndcg@10", "--windows", "2", "--json", "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(args) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) == {"design", "settings", "values", "kendall"}
    got = pd.DataFrame(doc["values"])
    assert got["value"].to_numpy() == pytest.approx(study.values["value"].to_numpy(), nan_ok=True)
    assert [r["tau"] for r in doc["kendall"]] == pytest.approx(study.kendall["tau"].tolist(), nan_ok=True)
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"kendall.csv", "settings.csv", "values.csv", "values.png", "tau.png", "report.html"} <= written
    page = (tmp_path / "out" / "report.html").read_text()
    assert "global_after_test" in page and "Kendall" in page
    assert pd.read_csv(tmp_path / "out" / "values.csv")["value"].to_numpy() == pytest.approx(
        study.values["value"].to_numpy(), nan_ok=True
    )


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--protocols", "random,holdout", "--protocols holdout"),
        ("--cores", "0,x", "--cores must be whole numbers"),
        ("--cores", "0,-5", "-5"),
        ("--seed", "-1", "seed"),
        ("--algorithms", "popularity,nope", "nope"),
        ("--window", "30x", "30x"),
        ("--at", "tomorrowish", "tomorrowish"),
    ],
)
def test_bad_input_exits_2_with_one_line_before_reading(option, value, words, tmp_path, capsys):
    missing = tmp_path / "never-read.csv"  # not there: a check after reading would say so instead
    assert main(["protocols-study", str(missing), option, value]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and words in err and "never-read" not in err


def test_no_timestamps_is_refused_for_time_protocols(data):
    flat = Interactions.from_arrays(data.users, data.items, data.ratings)
    with pytest.raises(DataError, match="no timestamps"):
        protocols_study(flat, ["popularity", "random"], protocols=["random", "loo"], cores=[0])
    one = protocols_study(flat, ["popularity", "random"], protocols=["random"], cores=[0], metrics=["ndcg@10"])
    assert one.kendall.empty and one.design["cut"] is None


def test_a_core_that_removes_everything_is_a_data_error(data):
    with pytest.raises(DataError, match="core=500"):
        protocols_study(data, ["popularity", "random"], protocols=["random"], cores=[500])
    with pytest.raises(ConfigError, match="two different"):
        protocols_study(data, ["popularity"], protocols=["random"], cores=[0])
