"""The protocols study (receval.studies.protocols, ``receval protocols-study``): hand-checkable facts."""

from __future__ import annotations

import json
import re
import zlib

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
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
    assert set(doc) == {"design", "settings", "values", "kendall", "tuning"}
    assert {r["variant"] for r in doc["values"]} == {"defaults"} and doc["tuning"] == []
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
        ("--trials", "-1", "--trials -1: give an integer of at least 0"),
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


# ---------------------------------------------------------------- the tuned variant (--trials)
_TUNED = {"protocols": ["random", "loo", "temporal", "rolling"], "cores": [0], "metrics": ["ndcg@10"], "windows": 2}


@pytest.fixture(scope="module")
def tuned(data):
    return protocols_study(data, ["popularity", "item-knn", "ease"], trials=3, **_TUNED)


def test_every_setting_has_a_tuned_row_per_recommender_and_popularity_is_its_defaults(tuned):
    v = tuned.values.set_index(["protocol", "core", "variant", "algorithm"])["value"]
    assert len(v) == 4 * 2 * 3 and v.index.is_unique  # 4 settings x 2 variants x 3 recommenders
    for word in _TUNED["protocols"]:
        assert v[word, 0, "tuned", "popularity"] == v[word, 0, "defaults", "popularity"]  # no space: the defaults
    pop = tuned.tuning[tuned.tuning["algorithm"] == "popularity"]
    assert (pop["draw"] == 0).all() and pop["chosen"].all() and (pop["params"] == "{}").all()
    # the other two: the defaults and 3 draws per fold (rolling: 2 windows), exactly one chosen per fold
    knn = tuned.tuning[tuned.tuning["algorithm"] == "item-knn"]
    assert len(knn) == (1 + 1 + 1 + 2) * 4 and (knn.groupby(["protocol", "fold"])["chosen"].sum() == 1).all()
    # τ within each variant: every pair of the 4 settings once per variant
    assert sorted(tuned.kendall.groupby("variant").size().items()) == [("defaults", 6), ("tuned", 6)]


def test_the_choice_is_the_best_validation_value_and_the_draws_are_the_seeded_ones(data, tuned):
    from receval.evaluation import evaluate_model
    from receval.recommenders import make
    from receval.recommenders.space import draw, parse_space
    from receval.split import per_user_holdout
    from receval.studies.protocols import PROTOCOLS_STUDY_SPACES

    rows = tuned.tuning[(tuned.tuning["protocol"] == "random") & (tuned.tuning["algorithm"] == "ease")]
    # the draws: one generator seeded by (seed, protocol, core, recommender), a CRC-32 of the names
    rng = np.random.default_rng([0, zlib.crc32(b"random/0/ease")])
    drawn = [draw(parse_space(PROTOCOLS_STUDY_SPACES["ease"]), rng) for _ in range(3)]
    assert [json.loads(p) for p in rows["params"]] == [{}, *drawn]
    # each validation value by hand: fit on the per-user holdout of train, scored on its held-out part
    train, test = per_user_holdout(data, 0.2, seed=0)
    fit, validation = per_user_holdout(train, 0.2, seed=0)
    by_hand = [evaluate_model(make("ease", **p), fit, validation, ["ndcg@10"], seed=0, cold_start="exclude")
               .summary["ndcg@10"] for p in [{}, *drawn]]  # fmt: skip
    assert rows["validation"].to_numpy() == pytest.approx(by_hand)
    best = int(np.argmax(by_hand))  # the first best: the defaults win a tie
    assert rows["chosen"].tolist() == [i == best for i in range(4)]
    chosen = make("ease", **[{}, *drawn][best])
    on_test = evaluate_model(chosen, train, test, ["ndcg@10"], seed=0, cold_start="exclude").summary["ndcg@10"]
    v = tuned.values.set_index(["protocol", "variant", "algorithm"])["value"]
    assert v["random", "tuned", "ease"] == pytest.approx(on_test)


def _other_test_items(data, train, test, seed):
    """``data`` with each test row's item replaced by another the user has not rated: train unchanged."""
    rng = np.random.default_rng(seed)
    seen = [set(train.items[train.users == u]) for u in range(data.n_users)]
    items = test.items.copy()
    for r, u in enumerate(test.users):
        free = [i for i in range(data.n_items) if i not in seen[u]]
        items[r] = free[int(rng.integers(len(free)))]
        seen[u].add(items[r])
    return Interactions(
        users=np.concatenate([train.users, test.users]), items=np.concatenate([train.items, items]),
        ratings=np.concatenate([train.ratings, test.ratings]), user_ids=data.user_ids, item_ids=data.item_ids,
        scale=data.scale, timestamps=np.concatenate([train.timestamps, test.timestamps]),
    )  # fmt: skip


def test_tuning_never_reads_the_test_part(data):
    from receval.evaluation import evaluate_model
    from receval.recommenders import make
    from receval.split import temporal

    cut = int(np.quantile(data.timestamps, 0.8))
    options = {"protocols": ["temporal"], "cores": [0], "metrics": ["ndcg@10"], "trials": 4, "at": cut}
    train, test = temporal(data, at=cut)
    other = _other_test_items(data, train, test, seed=2)
    train2, test2 = temporal(other, at=cut)
    assert train2.n_ratings == train.n_ratings and not np.array_equal(test2.items, test.items)
    a = protocols_study(data, ["popularity", "item-knn"], **options)
    b = protocols_study(other, ["popularity", "item-knn"], **options)
    pd.testing.assert_frame_equal(a.tuning, b.tuning)  # the same draws, validation values and choices
    assert not np.allclose(a.values["value"], b.values["value"])  # though the test part changed what is measured
    # and a tuner that read the test part would have chosen differently on the two: the best draw on test differs
    draws = [json.loads(p) for p in a.tuning[a.tuning["algorithm"] == "item-knn"]["params"]]

    def best_on(tr, te):
        values = [evaluate_model(make("item-knn", **p), tr, te, ["ndcg@10"], seed=0, cold_start="exclude")
                  .summary["ndcg@10"] for p in draws]  # fmt: skip
        return int(np.argmax(values))

    assert best_on(train, test) != best_on(train2, test2)


def test_same_seed_same_study_another_seed_other_draws(data, tuned):
    again = protocols_study(data, ["popularity", "item-knn", "ease"], trials=3, **_TUNED)
    pd.testing.assert_frame_equal(again.values, tuned.values)
    pd.testing.assert_frame_equal(again.tuning, tuned.tuning)
    other = protocols_study(data, ["popularity", "ease"], trials=3, seed=1, **{**_TUNED, "protocols": ["loo"]})
    mine = tuned.tuning[(tuned.tuning["protocol"] == "loo") & (tuned.tuning["algorithm"] == "ease")]
    theirs = other.tuning[other.tuning["algorithm"] == "ease"]
    assert mine["params"].tolist()[1:] != theirs["params"].tolist()[1:]


def test_cli_trials_prints_both_variants_and_json_has_them(data, tuned, tmp_path, capsys):
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"user": data.user_ids[data.users], "item": data.item_ids[data.items], "rating": data.ratings,
                  "timestamp": data.timestamps}).to_csv(path, index=False)  # fmt: skip
    args = ["protocols-study", str(path), "--algorithms", "popularity,item-knn,ease", "--cores", "0",
            "--metrics", "ndcg@10", "--windows", "2", "--trials", "3"]  # fmt: skip
    assert main([*args, "--json", "--out", str(tmp_path / "out")]) == 0
    doc = json.loads(capsys.readouterr().out)
    got = pd.DataFrame(doc["values"])
    assert set(got["variant"]) == {"defaults", "tuned"}
    assert got["value"].to_numpy() == pytest.approx(tuned.values["value"].to_numpy(), nan_ok=True)
    assert pd.DataFrame(doc["tuning"])["params"].tolist() == tuned.tuning["params"].tolist()
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"tuning.csv", "tau.png", "tau-tuned.png", "report.html"} <= written
    assert "Chosen parameters" in (tmp_path / "out" / "report.html").read_text()
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "ndcg@10 tuned (3 draws each" in text and "Chosen parameters" in text and "within each variant" in text


@pytest.mark.parametrize(
    ("space", "words"),
    [
        ({"k": {"int": [5]}}, "spaces['item-knn']: space.k int = [5]: give [low, high]"),
        ({"k": {"float": [0, 10], "log": True}}, "a log-scale range needs low > 0"),
        ({"k": {"int": [1, 5], "choices": [1]}}, "exactly one of"),
        ({"k": {"int": [1, 5], "stepp": 1}}, "unknown key 'stepp'"),
        ({"k": {"int": [1, 5], "log": "yes"}}, "log = 'yes': give bool"),
        ({"k": 5}, "space.k = 5: give a table"),
        ({"kk": {"int": [1, 5]}}, "kk"),  # not a parameter of item-knn
    ],
)
def test_a_bad_space_is_refused_before_any_work(data, space, words):
    with pytest.raises(ConfigError, match=re.escape(words)):
        protocols_study(data, ["popularity", "item-knn"], protocols=["random"], cores=[0], trials=2,
                        spaces={"item-knn": space})  # fmt: skip


@settings(max_examples=50, deadline=None)
@given(
    low=st.floats(0.001, 100), width=st.floats(0.01, 1000), log=st.booleans(), seed=st.integers(0, 2**32 - 1)
)  # fmt: skip
def test_draws_stay_in_their_range_and_repeat_with_their_seed(low, width, log, seed):
    from receval.recommenders.space import draw, parse_space

    space = {"x": {"float": [low, low + width], "log": log}, "n": {"int": [1, 2 + int(width)], "log": log},
             "c": {"choices": ["a", "b", "c"]}}  # fmt: skip
    draws = [draw(parse_space(space), np.random.default_rng(seed)) for _ in range(2)]
    assert draws[0] == draws[1]
    d = draws[0]
    assert low <= d["x"] <= low + width and isinstance(d["n"], int) and 1 <= d["n"] <= 2 + int(width)
    assert d["c"] in "abc"


@pytest.mark.parametrize(("word", "fold"), [("loo", 0), ("temporal", 0), ("rolling", 1)])
def test_each_protocol_validates_on_its_own_kind_of_cut_of_train(data, tuned, word, fold):
    from receval.evaluation import evaluate_model
    from receval.recommenders import make
    from receval.split import leave_one_out, split_by_name, temporal

    cut = tuned.design["cut"]
    folds = {"loo": lambda: [leave_one_out(data, "last", seed=0)], "temporal": lambda: [temporal(data, at=cut)],
             "rolling": lambda: split_by_name(data, "rolling", windows=2, seed=0)}[word]()  # fmt: skip
    train = folds[fold][0]
    # loo: each user's last training pair; temporal and a rolling window: the latest 20 % of the training pairs
    fit, validation = leave_one_out(train, "last", seed=0) if word == "loo" else temporal(train, 0.2, seed=0)
    if word != "loo":
        assert fit.timestamps.max() <= validation.timestamps.min()
    rows = tuned.tuning[(tuned.tuning["protocol"] == word) & (tuned.tuning["fold"] == fold)]
    rows = rows[rows["algorithm"] == "ease"]
    by_hand = [evaluate_model(make("ease", **json.loads(p)), fit, validation, ["ndcg@10"], seed=0,
                              cold_start="exclude").summary["ndcg@10"] for p in rows["params"]]  # fmt: skip
    assert rows["validation"].to_numpy() == pytest.approx(by_hand)
