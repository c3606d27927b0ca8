"""The faithful variants of Cuesta Fernández's BSc thesis (UAM 2021) against hand-computed values.

kNN bandit counts (§2.2.4, Eq. 2.15–2.17), Kendall's τ-a (Eq. 2.10), UCB's pulls and δ
decay (Eq. 2.13) and the ``thesis`` preset (docs/guides/thesis.md).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from receval import Interactions
from receval.cli import main
from receval.errors import ConfigError
from receval.recommenders.bandits import _kernels as K
from receval.recommenders.bandits import make_online
from receval.recommenders.bandits._rng import generator
from receval.recommenders.bandits.item import ItemBandit
from receval.recommenders.bandits.knn import KNNBandit
from receval.recommenders.registry import PRESETS, SIMULATION_PRESETS, make
from receval.simulate import simulate
from receval.stats.agreement import kendall_agreement, kendall_tau_a, tau_between

DOCS = Path(__file__).resolve().parents[1] / "docs" / "guides" / "thesis.md"

# users 0..2, items 0..3, λ = 4:  u0 likes 0, 2 and dislikes 1;  u1 likes 0, 3 and dislikes 1;
# u2 likes 1 and dislikes 2
_TINY = Interactions.from_arrays([0, 0, 0, 1, 1, 1, 2, 2], [0, 1, 2, 0, 1, 3, 1, 2], [5, 2, 4, 4, 1, 5, 5, 2])


# ------------------------------------------------------------------ kNN bandit
def test_knn_positive_agreement_counts_only_common_likes():
    m = KNNBandit(k=1, threshold=4).fit(_TINY)
    # α: u0 and u1 both liked item 0; nobody else shares a like. n_v: positives only.
    assert m.co_.tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 0]]
    assert m.n_rated_.tolist() == [2, 2, 1]
    m.update([2], [0], [0.0])  # a negative feedback changes nothing
    assert m.co_.tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 0]] and m.n_rated_.tolist() == [2, 2, 1]


def test_knn_both_agreement_is_the_thesis_alpha_and_n():
    m = KNNBandit(k=1, threshold=4, agreement="both").fit(_TINY)
    # α_01 = 2 (item 0 liked by both, item 1 disliked by both); u2 disagrees with both on items 1 and 2
    assert m.co_.tolist() == [[0, 2, 0], [2, 0, 0], [0, 0, 0]]
    assert m.n_rated_.tolist() == [3, 3, 2]  # n_v: every item v rated
    m.update([2], [0], [0.0])  # u2 dislikes item 0, which nobody disliked: only n_2 grows
    assert m.co_.tolist() == [[0, 2, 0], [2, 0, 0], [0, 0, 0]] and m.n_rated_.tolist() == [3, 3, 3]
    m.update([2], [3], [1.0])  # u2 likes item 3, as u1 did
    assert m.co_.tolist() == [[0, 2, 0], [2, 0, 1], [0, 1, 0]] and m.n_rated_.tolist() == [3, 3, 4]
    m.update([2, 2, 0], [3, 0, 3], [1.0, 1.0, float("nan")])  # rated pairs keep their first rating; unknown: nothing
    assert m.co_.tolist() == [[0, 2, 0], [2, 0, 1], [0, 1, 0]] and m.n_rated_.tolist() == [3, 3, 4]


def test_knn_both_takes_the_last_of_repeated_training_ratings():
    data = Interactions.from_arrays([0, 0, 1], [0, 0, 0], [5, 1, 1])  # u0 rated item 0 twice: 5, then 1
    m = KNNBandit(k=1, threshold=4, agreement="both").fit(data)
    assert m.co_[0, 1] == 1 and m.n_rated_.tolist() == [1, 1]


def test_knn_bad_agreement_is_refused_by_name():
    with pytest.raises(ConfigError, match="agreement='all' is not one of positive, both"):
        make("knn-bandit", agreement="all")


def _counts(users, items, signs, nu, ni):
    """Independent α and n from a list of (user, item, ±1) ratings, first rating of a pair kept."""
    r = np.zeros((nu, ni))
    for u, i, s in zip(users, items, signs, strict=True):
        if r[u, i] == 0:
            r[u, i] = s
    pos, neg = (r > 0).astype(int), (r < 0).astype(int)
    co = pos @ pos.T + neg @ neg.T
    np.fill_diagonal(co, 0)
    return co, (r != 0).sum(axis=1)


@pytest.mark.parametrize("updates", ["sequential", "batched"])
def test_knn_both_counts_after_a_simulation_match_an_independent_count(updates):
    rng = np.random.default_rng(3)
    nu, ni = 12, 15
    pairs = rng.choice(nu * ni, 120, replace=False)
    ratings = rng.integers(1, 6, 120)
    data = Interactions.from_arrays(pairs // ni, pairs % ni, ratings)
    train, test = data.subset(np.arange(60)), data.subset(np.arange(60, 120))
    run = simulate(make_online("knn-bandit", preset="thesis", k=3), train, test, rounds=6, threshold=4,
                   seed=1, record_log=True, updates=updates)  # fmt: skip
    log = run.log[run.log["feedback"] >= 0]
    users = np.concatenate([train.users, log["user"].to_numpy()])
    items = np.concatenate([train.items, log["item"].to_numpy()])
    signs = np.concatenate([np.where(train.ratings >= 4, 1, -1), np.where(log["feedback"] == 1, 1, -1)])
    co, n = _counts(users, items, signs, nu, ni)
    np.testing.assert_array_equal(run.model.co_, co)
    np.testing.assert_array_equal(run.model.n_rated_, n)


# ------------------------------------------------------------------ Kendall τ-a
@pytest.mark.parametrize(
    ("x", "y", "tau_a", "tau_b"),
    [
        # one tie in y: 5 concordant pairs of 6; τ-b = 5 / √(6·5)
        ([1, 2, 3, 4], [1, 1, 2, 3], 5 / 6, 5 / math.sqrt(30)),
        # pairs: (0,1) (0,2) (0,3) discordant, (1,3) concordant, (1,2) and (2,3) tied: −2/6; τ-b = −2 / √(5·5)
        ([1, 2, 2, 3], [3, 1, 2, 2], -2 / 6, -2 / 5),
        ([1, 2, 3], [3, 2, 1], -1.0, -1.0),  # no ties: the variants agree
    ],
)
def test_tau_a_and_b_by_hand(x, y, tau_a, tau_b):
    x, y = np.array(x, float), np.array(y, float)
    assert kendall_tau_a(x, y) == pytest.approx(tau_a)
    assert tau_between(x, y, "a") == pytest.approx(tau_a)
    assert tau_between(x, y, "b") == pytest.approx(tau_b)
    assert tau_b == pytest.approx(stats.kendalltau(x, y).statistic)


def test_tau_a_of_an_all_tied_ranking_is_zero_and_tau_b_undefined():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 1.0])
    assert kendall_tau_a(x, y) == 0.0 and math.isnan(tau_between(x, y, "b"))
    assert math.isnan(kendall_tau_a(np.array([1.0, np.nan]), np.array([1.0, 2.0])))  # one system left


def test_tau_variant_reaches_the_agreement_of_final_tables():
    import pandas as pd

    final = pd.DataFrame(
        {"recall": [0.3, 0.2, 0.1], "fallout": [0.1, 0.1, 0.2], "precision": [1, 2, 3], "anti_precision": [1, 2, 3]}
    )
    assert kendall_agreement(final, tau="a")["recall_fallout"] == pytest.approx(2 / 3)
    assert kendall_agreement(final)["recall_fallout"] == pytest.approx(2 / math.sqrt(6))
    with pytest.raises(ConfigError, match="tau='c' is not one of a, b"):
        kendall_agreement(final, tau="c")


# ------------------------------------------------------------------ UCB
def _ucb_train():
    # item 0: 8 positives, 2 negatives; item 1: 1 and 1 (λ = 4)
    items = [0] * 10 + [1] * 2
    ratings = [5] * 8 + [1] * 2 + [5, 1]
    return Interactions.from_arrays(list(range(12)), items, ratings)


def test_ucb_pulls_all_and_feedback_by_hand():
    train = _ucb_train()
    every = ItemBandit("ucb", delta=1.0, threshold=4).fit(train)
    mean = np.array([9 / 12, 2 / 4])  # prior (1, 1) plus the training counts
    np.testing.assert_allclose(every.score([0])[0], mean + np.sqrt(np.log(12) / np.array([10, 2])))
    fed = ItemBandit("ucb", delta=1.0, threshold=4, pulls="feedback").fit(train)
    assert np.isinf(fed.score([0])[0]).all()  # no arm pulled yet: the thesis' initialisation round comes first
    fed.update([0, 1, 2], [0, 0, 1], [1.0, 0.0, 1.0])
    mean = np.array([10 / 14, 3 / 5])
    np.testing.assert_allclose(fed.score([0])[0], mean + np.sqrt(np.log(3) / np.array([2, 1])))


def test_ucb_feedback_pulls_try_every_arm_once_first():
    rng = np.random.default_rng(0)
    nu, ni = 40, 9
    data = Interactions.from_arrays(rng.integers(0, nu, 300), rng.integers(0, ni, 300), rng.integers(1, 6, 300))
    train, test = data.subset(np.arange(150)), data.subset(np.arange(150, 300))
    run = simulate(make("item-bandit-ucb", pulls="feedback"), train, test, rounds=1, threshold=4,
                   exclude_train=False, record_log=True, seed=2)  # fmt: skip
    assert sorted(run.log["item"][:ni]) == list(range(ni))  # unknown feedback counts as a failure: every pull counts


def test_ucb_delta_decays_with_the_decisions():
    st = ItemBandit("ucb", delta=1.0, delta_decay=1e-3, threshold=4).fit(_ucb_train()).kernel_state()
    cell = np.zeros((1, 2), np.uint8)
    # δ = 1: scores 0.75 + √(ln 12/10) = 1.248 and 0.5 + √(ln 12/2) = 1.614; after 10⁶ decisions δ = 1/1001
    assert K.item_decide(st, generator(0), cell, np.uint8(3), 0, 0, 2) == 1
    assert K.item_decide(st, generator(0), cell, np.uint8(3), 0, 1_000_000, 2) == 0


def test_ucb_bad_options_are_refused():
    with pytest.raises(ConfigError, match="pulls='some' is not one of all, feedback"):
        ItemBandit("ucb", pulls="some", threshold=4).fit(_ucb_train())
    with pytest.raises(ConfigError, match="delta_decay=-1"):
        ItemBandit("ucb", delta_decay=-1, threshold=4).fit(_ucb_train())


# ------------------------------------------------------------------ the preset
def test_thesis_preset_is_cyclorec_plus_the_faithful_variants():
    thesis, cyclorec = PRESETS["thesis"], PRESETS["cyclorec"]
    assert make("knn-bandit", preset="thesis").agreement == "both"
    assert make("knn-bandit").agreement == "positive"
    for name in ("item-bandit-ucb", "im-item-bandit-ucb"):
        model = make(name, preset="thesis")
        assert model.pulls == "feedback" and model.delta_decay > 0
    for name, params in cyclorec.items():  # the thesis' own code is CycloRec
        assert params.items() <= thesis[name].items()
    assert SIMULATION_PRESETS["thesis"] == {"refit_every": 1, "tau": "a", "test_fraction": 0.2}
    assert SIMULATION_PRESETS["standard"]["refit_every"] == 10 and SIMULATION_PRESETS["standard"]["tau"] == "b"


def test_simulate_refit_period_follows_the_preset():
    data = Interactions.from_arrays([0, 1, 0, 0, 1, 1], [0, 1, 1, 2, 0, 2], [5, 5, 4, 1, 2, 5])
    train, test = data.subset([0, 1]), data.subset([2, 3, 4, 5])
    assert simulate("user-knn", train, test, rounds=1, threshold=4).settings["refit_every"] == 10
    assert simulate("user-knn", train, test, rounds=1, threshold=4, preset="thesis").settings["refit_every"] == 1
    with pytest.raises(ConfigError, match="unknown preset 'paper'"):
        simulate("user-knn", train, test, rounds=1, threshold=4, preset="paper")


def test_the_guide_lists_every_value_of_the_preset():
    lines = DOCS.read_text(encoding="utf-8").splitlines()
    for name, params in PRESETS["thesis"].items():
        for key, value in params.items():
            if PRESETS["cyclorec"].get(name, {}).get(key) != value:  # the thesis' own values, beside CycloRec's
                cell = f"`{key} = {json.dumps(value)}`"
                assert any(f"`{name}`" in line and cell in line for line in lines), (name, cell)
    for key, value in SIMULATION_PRESETS["thesis"].items():
        assert any(f"`{key} = {json.dumps(value)}`" in line for line in lines), key


def _files(tmp_path):
    rng = np.random.default_rng(5)
    rows = sorted({(int(u), int(i)) for u, i in zip(rng.integers(0, 30, 400), rng.integers(0, 25, 400), strict=True)})
    path = tmp_path / "ratings.csv"
    path.write_text("user,item,rating\n" + "".join(f"{u},{i},{rng.integers(1, 6)}\n" for u, i in rows))
    return path


def test_simulate_command_states_the_tau_variant(tmp_path, capsys):
    path = _files(tmp_path)
    base = ["simulate", "--data", str(path), "--threshold", "4", "--rounds", "3",
            "--algorithms", "random,popularity,average,item-bandit-ucb,item-bandit-ucb@d2"]  # fmt: skip
    assert main([*base, "--param", "item-bandit-ucb@d2:delta=2", "--json", "--preset", "thesis"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["settings"] == {"preset": "thesis", "tau": "a", "test_fraction": 0.2, "refit_every": 1}
    best = doc["best_per_algorithm"]
    assert best["round"] == 3 and [r["algorithm"] for r in best["table"]][-1] == "item-bandit-ucb"
    assert main([*base, "--tau", "b"]) == 0
    out = capsys.readouterr().out
    assert "Kendall τ-b (quality rankings" in out and "best configuration of each algorithm at round 3" in out
    assert main([*base, "--tau", "c"]) == 2
    assert "--tau 'c' is not one of a, b" in capsys.readouterr().err


def test_cyclic_protocol_accepts_the_preset_and_refuses_a_bad_tau():
    from receval.experiment.config import parse_config

    text = (
        'name = "g"\nmetrics = ["recall"]\n[datasets.toy]\ngenerate = { n_users = 20, n_items = 10, n_ratings = 100 }\n'
    )
    text += 'threshold = 4\n[recommenders.knn-bandit]\n[protocol]\nname = "cyclic"\nrounds = 2\npreset = "thesis"\n'
    assert parse_config(text + 'tau = "a"\n').protocol.options["tau"] == "a"
    with pytest.raises(ConfigError, match=re.escape("protocol.tau 'x' is not one of a, b")):
        parse_config(text + 'tau = "x"\n')
