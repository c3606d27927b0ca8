"""The cyclic simulator and the online recommenders (issue 5)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from receval import Interactions
from receval.errors import ConfigError, DataError
from receval.recommenders.bandits import ONLINE_ALGORITHMS, ItemBandit, KNNBandit, make_online
from receval.simulate import METRICS, simulate

ALL = list(ONLINE_ALGORITHMS)
pytestmark = pytest.mark.filterwarnings("ignore:the test set has no:RuntimeWarning")


def _split(data: Interactions, frac: float, seed: int) -> tuple[Interactions, Interactions]:
    held = np.random.default_rng(seed).random(data.n_ratings) < frac
    return data.subset(~held), data.subset(held)


def _complete(n_users: int = 12, n_items: int = 9, seed: int = 0) -> Interactions:
    rng = np.random.default_rng(seed)
    u = np.repeat(np.arange(n_users), n_items)
    i = np.tile(np.arange(n_items), n_users)
    return Interactions.from_arrays(u, i, rng.integers(1, 6, n_users * n_items))


def _sparse(n_users: int = 30, n_items: int = 20, density: float = 0.4, seed: int = 0) -> Interactions:
    rng = np.random.default_rng(seed)
    u, i = np.nonzero(rng.random((n_users, n_items)) < density)
    u = np.r_[u, np.arange(n_users), np.zeros(n_items, int)]  # every id present
    i = np.r_[i, np.zeros(n_users, int), np.arange(n_items)]
    data = Interactions.from_arrays(u, i, rng.integers(1, 6, len(u)))
    return data.deduplicate("first")


# ------------------------------------------------------------------ properties
@pytest.mark.parametrize("name", ALL)
def test_complete_matrix_identities(name):
    train, test = _split(_complete(), 0.7, 1)
    full_test = test
    traj = simulate(name, train, full_test, rounds=50, threshold=4, seed=3)
    t = traj.table
    # every recommendable pair is in test: Precision + AntiPrecision = 1 each round
    np.testing.assert_allclose(t["precision"] + t["anti_precision"], 1.0)
    lhs = traj.n_positives * t["recall"] + traj.n_negatives * t["fallout"]
    np.testing.assert_allclose(lhs, t["n_distinct"])
    assert (t["unknown"] == 0).all()


@pytest.mark.parametrize("name", ALL)
def test_exhaustion_reaches_everything_once(name):
    data = _sparse(seed=2)
    train, test = _split(data, 0.5, 3)
    traj = simulate(name, train, test, rounds=100, threshold=4, seed=5, record_log=True)
    last = traj.final()
    assert last["recall"] == 1.0 and last["fallout"] == 1.0 and last["discovered"] == 1.0
    log = traj.log
    pairs = log["user"].to_numpy().astype(np.int64) * data.n_items + log["item"].to_numpy()
    assert len(np.unique(pairs)) == len(pairs), "a (user, item) pair was recommended twice"
    train_pairs = set((train.users.astype(np.int64) * data.n_items + train.items).tolist())
    assert not train_pairs & set(pairs.tolist()), "a training item was recommended"
    # exhausted: every user received every non-training item, then the run stopped
    assert len(traj.table) == data.n_items - np.bincount(train.users, minlength=data.n_users).min()
    assert traj.table["active_users"].iloc[-1] >= 1


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 10_000),
    name=st.sampled_from(ALL),
    order=st.sampled_from(["random", "uniform-with-replacement"]),
    updates=st.sampled_from(["sequential", "batched"]),
    repeats=st.booleans(),
    n_per_round=st.integers(1, 3),
)
def test_metrics_cumulative_and_bounded(seed, name, order, updates, repeats, n_per_round):
    data = _sparse(n_users=15, n_items=12, seed=seed)
    train, test = _split(data, 0.5, seed)
    traj = simulate(
        name, train, test, rounds=15, threshold=3, seed=seed, order=order, updates=updates,
        allow_repeats=repeats, n_per_round=n_per_round,
    )  # fmt: skip
    t = traj.table
    for col in ("tp", "fp", "unknown", "n_distinct", "n_recommendations", "recall", "fallout", "discovered"):
        assert (np.diff(t[col].to_numpy()) >= 0).all(), col
    for m in METRICS:
        vals = t[m].dropna().to_numpy()
        assert ((vals >= 0) & (vals <= 1 + 1e-12)).all(), m
    assert (t["tp"] + t["fp"] + t["unknown"] == t["n_distinct"]).all()
    assert (t["n_distinct"] <= t["n_recommendations"]).all()
    if not repeats:
        assert (t["n_distinct"] == t["n_recommendations"]).all()


def test_same_seed_same_trajectory_different_seed_differs():
    train, test = _split(_sparse(n_users=40, n_items=30, seed=4), 0.3, 4)
    for name in ("random", "item-bandit-ts", "item-bandit-egreedy", "knn-bandit"):
        a = simulate(name, train, test, rounds=8, threshold=4, seed=11, record_log=True)
        b = simulate(name, train, test, rounds=8, threshold=4, seed=11, record_log=True)
        c = simulate(name, train, test, rounds=8, threshold=4, seed=12, record_log=True)
        assert a.table.equals(b.table) and a.log.equals(b.log)
        assert not a.log.equals(c.log)


def test_epsilon_one_is_uniform_like_random():
    # 20 training users all love item 0; 3000 fresh users choose among 6 items (no learning within the round)
    n_fresh, n_items = 3000, 6
    u = np.r_[np.repeat(np.arange(20), 2), np.arange(20, 20 + n_fresh)]
    i = np.r_[np.tile([0, 1], 20), np.arange(n_fresh) % n_items]
    r = np.r_[np.tile([5, 1], 20), np.where(np.arange(n_fresh) % 2, 5, 1)]
    data = Interactions.from_arrays(u, i, r)
    train = data.subset(np.arange(40))
    test = data.subset(np.arange(40, data.n_ratings))

    def first_choices(name, **params):
        model = make_online(name, **params)
        log = simulate(model, train, test, rounds=1, threshold=4, seed=7, record_log=True, updates="batched").log
        return np.bincount(log["item"][log["user"] >= 20], minlength=n_items)

    explore = first_choices("item-bandit-egreedy", epsilon=1.0)
    rand = first_choices("random")
    greedy = first_choices("item-bandit-egreedy", epsilon=0.0)
    assert stats.chisquare(explore).pvalue > 1e-3  # uniform over the six items
    assert stats.chi2_contingency(np.vstack([explore, rand])).pvalue > 1e-3
    assert greedy[0] > 0.9 * n_fresh  # ε = 0 exploits item 0
    decayed = first_choices("item-bandit-egreedy", epsilon=1.0, epsilon_decay=1e6)  # ε_t = 1/(1 + 10⁶·t)
    assert decayed[0] > 0.9 * n_fresh


@pytest.mark.parametrize("name", ["item-bandit-egreedy", "item-bandit-ucb", "item-bandit-ts", "im-item-bandit-ts"])
@pytest.mark.parametrize("preset", ["standard", "cyclorec"])
def test_bandit_counts_add_up(name, preset):
    data = _sparse(n_users=25, n_items=15, seed=8)
    train, test = _split(data, 0.4, 8)
    model = make_online(name, preset=preset)
    traj = simulate(model, train, test, rounds=6, threshold=4, seed=2, record_log=True, updates="batched")
    log = traj.log
    pos_train = train.ratings >= 4
    a0, b0 = model.alpha0, model.beta0
    succ = np.bincount(train.items[pos_train], minlength=data.n_items) + np.bincount(
        log["item"][log["feedback"] == 1], minlength=data.n_items
    )
    events = log["feedback"] == 0
    if model.unknown == "failure":
        events |= log["feedback"] == -1
    fail = np.bincount(train.items[~pos_train], minlength=data.n_items) + np.bincount(
        log["item"][events], minlength=data.n_items
    )
    np.testing.assert_array_equal(model.a_, succ + a0)
    np.testing.assert_array_equal(model.b_, fail + b0)
    assert model.params_[8] == len(train) + int(events.sum() + (log["feedback"] == 1).sum())


def test_knn_bandit_counts_symmetric_and_consistent():
    train, test = _split(_sparse(n_users=30, n_items=20, seed=9), 0.5, 9)
    traj = simulate("knn-bandit", train, test, rounds=10, threshold=3, seed=4, record_log=True)
    m = traj.model
    assert (m.co_ == m.co_.T).all()
    liked = m.liked_.astype(np.int64)
    co = liked @ liked.T
    np.fill_diagonal(co, 0)
    np.testing.assert_array_equal(m.co_, co)
    np.testing.assert_array_equal(m.n_liked_, liked.sum(axis=1))
    log = traj.log
    revealed = log[log["feedback"] == 1]
    assert liked[revealed["user"], revealed["item"]].all()
    expected_pos = len(
        np.unique(train.users[train.ratings >= 3].astype(np.int64) * 20 + train.items[train.ratings >= 3])
    )
    assert liked.sum() == expected_pos + len(revealed)


# ------------------------------------------------------------------ hand-checked choices
def _tiny(train_rows, test_rows, n_users, n_items):
    """Interactions over users 0..n_users-1, items 0..n_items-1 from (u, i, r) rows."""
    rows = np.array(train_rows + test_rows, dtype=float)
    pad_u = np.arange(n_users)
    pad_i = np.arange(n_items)
    data = Interactions.from_arrays(
        np.r_[rows[:, 0], pad_u, np.zeros(n_items)], np.r_[rows[:, 1], np.zeros(n_users), pad_i],
        np.r_[rows[:, 2], np.ones(n_users + n_items)],
    )  # fmt: skip
    n_tr, n_te = len(train_rows), len(test_rows)
    return data.subset(np.arange(n_tr)), data.subset(np.arange(n_tr, n_tr + n_te))


def _first_item(name, train, test, user, **params):
    """The item ``user`` gets in round 1 from the trained state (batched: others' feedback waits)."""
    model = make_online(name, **params) if isinstance(name, str) else name
    log = simulate(model, train, test, rounds=1, threshold=4, seed=0, record_log=True, updates="batched").log
    return int(log["item"][log["user"] == user].iloc[0])


def test_hand_checked_choices():
    # users 0-2 trained, user 3 fresh; item 0 unrated, item 1: 2 of 2 positive, item 2: 3 of 3,
    # item 3: one negative, item 4: two negatives
    train_rows = [(0, 1, 5), (1, 1, 4), (0, 2, 5), (1, 2, 5), (2, 2, 4), (0, 4, 1), (1, 4, 1), (2, 3, 1)]
    train, test = _tiny(train_rows, [(3, 1, 5), (3, 3, 1)], 4, 5)
    assert _first_item("popularity", train, test, 3) == 2  # 3 positives
    assert _first_item("popularity", train, test, 3, count="any") == 2  # 3 ratings > 2
    assert _first_item("average", train, test, 3) == 2  # (3+1)/(3+2) = .8 > (2+1)/(2+2) = .75 > 1/2
    assert _first_item("item-bandit-egreedy", train, test, 3, epsilon=0.0) == 2  # 4/5 > 3/4
    assert _first_item("item-bandit-ucb", train, test, 3, delta=0.0) == 0  # never-pulled arm first
    # popularity counting every rating: item 4 (two negatives) beats item 1 (two positives) only on ties
    rows = [(0, 4, 1), (1, 4, 1), (2, 4, 1), (0, 1, 5)]
    train, test = _tiny(rows, [(3, 1, 5), (3, 3, 1)], 4, 5)
    assert _first_item("popularity", train, test, 3, count="any") == 4
    assert _first_item("popularity", train, test, 3) == 1


def test_hand_checked_means_and_ucb():
    # item 0 never rated; item 1: 1 positive of 1; item 2: 9 positives of 10
    rows = [(0, 1, 5)] + [(u, 2, 5) for u in range(1, 10)] + [(10, 2, 1)]
    train, test = _tiny(rows, [(11, 1, 5), (11, 0, 1)], 12, 3)
    # smoothed means: item 1 (1+1)/(1+2) = .667 < item 2 (9+1)/(10+2) = .833 > item 0 1/2
    assert _first_item("average", train, test, 11) == 2
    # μ̂ with prior (1, 1): item 1 2/3, item 2 10/12, item 0 1/2
    assert _first_item("item-bandit-egreedy", train, test, 11, epsilon=0.0) == 2
    assert _first_item("item-bandit-ucb", train, test, 11, delta=0.1) == 0  # the never-pulled arm
    # round 2 (batched): every user got item 0 in round 1; the once-pulled item 1 has the larger bonus
    model = make_online("item-bandit-ucb", delta=5.0)
    log = simulate(model, train, test, rounds=2, threshold=4, seed=0, record_log=True, updates="batched").log
    assert log[log["user"] == 11]["item"].tolist() == [0, 1]
    # Thompson sampling with a confident, clearly better arm
    rows = [(u, 1, 5) for u in range(200)] + [(u, 2, 1) for u in range(200)]
    train, test = _tiny(rows, [(200, 1, 5)], 201, 3)
    assert _first_item("item-bandit-ts", train, test, 200) == 1


@pytest.mark.parametrize("a0", [1.0, 1.5])  # integer and non-integer priors
def test_hand_checked_knn_bandit(a0):
    from scipy import integrate

    # user 0 and user 1 share two liked items; user 1 also likes item 3; user 2 likes item 4 only
    rows = [(0, 0, 5), (0, 1, 5), (1, 0, 5), (1, 1, 5), (1, 3, 5), (2, 4, 5)]
    train, test = _tiny(rows, [(0, 3, 5), (0, 2, 1)], 3, 6)
    picks = []
    for seed in range(300):
        log = simulate(KNNBandit(k=1, alpha0=a0, beta0=1.0), train, test, rounds=1, threshold=4, seed=seed,
                       record_log=True, updates="batched").log  # fmt: skip
        picks.append(int(log["item"][log["user"] == 0].iloc[0]))
    counts = np.bincount(picks, minlength=6)
    assert counts[[0, 1]].sum() == 0  # training items are never recommended
    assert counts[3] + counts[4] == 300  # the neighbour's liked item, never the unliked item 2 or 5
    # nn = user 1 when x_1 ~ Beta(a0 + 2, 1 + 3 − 2) beats x_2 ~ Beta(a0 + 0, 1 + 1 − 0)
    x, y = stats.beta(a0 + 2, 2), stats.beta(a0, 2)
    p1 = integrate.quad(lambda v: x.pdf(v) * y.cdf(v), 0, 1)[0]
    assert stats.binomtest(int(counts[3]), 300, p1).pvalue > 1e-3


def test_random_is_uniform_over_available_items():
    n_users, n_items = 4000, 5
    rows = [(u, u % 2, 1) for u in range(n_users)]  # each user rated item 0 or item 1
    train, test = _tiny(rows, [(0, 4, 5)], n_users, n_items)
    log = simulate("random", train, test, rounds=1, threshold=4, seed=3, record_log=True).log
    even = log[log["user"] % 2 == 0]["item"].to_numpy()
    assert 0 not in even
    assert stats.chisquare(np.bincount(even, minlength=5)[1:]).pvalue > 1e-3


# ------------------------------------------------------------------ protocol options
def test_batched_updates_wait_for_the_round():
    # ε = 0 greedy, prior (1, 1): item 1 μ̂ = 2/3 > item 2 μ̂ = 4/7; one failure on item 1 makes it 1/2 < 4/7
    rows = [(0, 1, 5), (0, 2, 5), (5, 2, 5), (6, 2, 5), (7, 2, 1), (8, 2, 1)]
    train, test = _tiny(rows, [(u, 1, 1) for u in range(1, 5)], 9, 4)
    kwargs = dict(rounds=1, threshold=4, seed=1, record_log=True)
    bat = simulate(make_online("item-bandit-egreedy", epsilon=0.0), train, test, updates="batched", **kwargs).log
    seq = simulate(make_online("item-bandit-egreedy", epsilon=0.0), train, test, **kwargs).log
    takers = bat["user"] != 0  # user 0 rated item 1 in training
    assert (bat["item"][takers] == 1).all()  # nobody learned within the round
    assert (seq["item"][seq["user"] != 0] != 1).any()  # after the first failure, item 2 leads


def test_order_and_n_per_round():
    train, test = _split(_sparse(n_users=20, n_items=15, seed=3), 0.5, 3)
    t = simulate("random", train, test, rounds=3, threshold=4, n_per_round=2, seed=0).table
    assert t["n_recommendations"].tolist() == [40.0, 80.0, 120.0]
    log = simulate(
        "random", train, test, rounds=3, threshold=4, order="uniform-with-replacement", seed=0, record_log=True
    ).log
    per_round = log.groupby("round").size()
    assert (per_round == 20).all()
    assert log.groupby(["round", "user"]).size().max() > 1  # with replacement
    rep = simulate("random", train, test, rounds=30, threshold=4, allow_repeats=True, seed=0).table
    assert len(rep) == 30 and (rep["n_distinct"] < rep["n_recommendations"]).iloc[-1]


class _CountingScorer:
    """Any object with fit/score: scores items by training popularity; counts fits."""

    def __init__(self):
        self.fits = 0
        self.sizes = []

    def fit(self, train):
        self.fits += 1
        self.sizes.append(train.n_ratings)
        self.counts = np.bincount(train.items, minlength=train.n_items).astype(float)
        self.n_users = train.n_users
        return self

    def score(self, users):
        return np.tile(self.counts, (len(users), 1))


def test_generic_model_refits_on_revealed_feedback():
    train, test = _split(_sparse(n_users=20, n_items=15, seed=5), 0.5, 5)
    model = _CountingScorer()
    traj = simulate(model, train, test, rounds=5, threshold=4, refit_every=2, seed=0, record_log=True)
    assert model.fits == 3  # rounds 1-2, 3-4, 5
    known = traj.log[(traj.log["round"] <= 4) & (traj.log["feedback"] >= 0)]
    assert model.sizes[-1] == len(train) + len(known)
    assert traj.algorithm == "_CountingScorer"


class _WarmScorer(_CountingScorer):
    """Also has ``refit``: the simulator uses it for every refit after the first fit."""

    def refit(self, train):
        self.refits = getattr(self, "refits", 0) + 1
        self.sizes.append(train.n_ratings)
        return self


def test_refit_method_is_used_after_the_first_fit():
    train, test = _split(_sparse(n_users=20, n_items=15, seed=5), 0.5, 5)
    model = _WarmScorer()
    traj = simulate(model, train, test, rounds=5, threshold=4, refit_every=2, seed=0, record_log=True)
    assert model.fits == 1 and model.refits == 2  # rounds 1-2 from fit, 3-4 and 5 from refits
    known = traj.log[(traj.log["round"] <= 4) & (traj.log["feedback"] >= 0)]
    assert model.sizes[-1] == len(train) + len(known)


def test_hkv_refit_continues_the_sweeps():
    pytest.importorskip("implicit")
    from receval.recommenders.als import HKV

    train, _ = _split(_sparse(n_users=40, n_items=30, seed=7), 0.3, 7)
    warm = HKV(factors=8, iterations=5, seed=1).fit(train).refit(train, iterations=4)
    cold = HKV(factors=8, iterations=9, seed=1).fit(train)
    np.testing.assert_array_equal(warm.user_factors_, cold.user_factors_)  # 5 + 4 sweeps = 9 sweeps
    np.testing.assert_array_equal(warm.item_factors_, cold.item_factors_)
    assert warm.model_.iterations == 5
    with pytest.raises(ConfigError, match="id space"):
        warm.refit(_sparse(n_users=10, n_items=30, seed=7))


def test_offline_models_by_name():
    pytest.importorskip("receval.recommenders.knn")
    train, test = _split(_sparse(n_users=20, n_items=15, seed=6), 0.5, 6)
    for name in ("user-knn", "item-knn"):
        traj = simulate(name, train, test, rounds=20, threshold=4, refit_every=5, seed=0)
        assert traj.final()["recall"] == 1.0


# ------------------------------------------------------------------ bad input
def test_bad_input_errors():
    train, test = _split(_sparse(), 0.5, 1)
    with pytest.raises(DataError, match="outside the rating scale"):
        simulate("random", train, test, rounds=3, threshold=9)
    with pytest.raises(ConfigError, match="rounds"):
        simulate("random", train, test, rounds=0, threshold=4)
    with pytest.raises(ConfigError, match="unknown algorithm"):
        simulate("item-bandit-xyz", train, test, rounds=3, threshold=4)
    with pytest.raises(ConfigError, match="order"):
        simulate("random", train, test, rounds=3, threshold=4, order="roundrobin")
    with pytest.raises(ConfigError, match="item bandits only"):
        simulate("popularity", train, test, rounds=3, threshold=4, unknown="ignore")
    with pytest.raises(ConfigError, match="positive parameters"):
        simulate(ItemBandit("thompson", alpha0=0.0, beta0=0.0), train, test, rounds=3, threshold=4)
    other = Interactions.from_arrays([0], [0], [3])
    with pytest.raises(DataError, match="one id space"):
        simulate("random", train, other, rounds=3, threshold=4)
    with pytest.raises(ConfigError, match="preset"):
        simulate("random", train, test, rounds=3, threshold=4, preset="nope")
    complete = _complete(4, 3)
    with pytest.raises(DataError, match="nothing left"):
        simulate("random", complete, complete.subset([0]), rounds=3, threshold=4)


def test_undefined_recall_and_fallout_warn_and_give_nan():
    data = _sparse()
    train, test = _split(data, 0.5, 1)
    only_neg = test.subset(test.ratings < 4)
    with pytest.warns(RuntimeWarning, match="no positive"):
        t = simulate("random", train, only_neg, rounds=3, threshold=4).table
    assert t["recall"].isna().all() and t["recall_norm"].isna().all() and t["fallout"].notna().all()
    only_pos = test.subset(test.ratings >= 4)
    with pytest.warns(RuntimeWarning, match="no negative"):
        t = simulate("random", train, only_pos, rounds=3, threshold=4).table
    assert t["fallout"].isna().all() and t["recall"].notna().all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simulate("random", train, test, rounds=2, threshold=4)


@pytest.mark.parametrize(("preset", "offset"), [("standard", 0.0), ("cyclorec", 1.0)])
def test_thompson_choice_probability_matches_beta_posteriors(preset, offset):
    # arm 0: 2 successes, 1 failure; arm 1: 1 success, 1 failure; prior (1, 1); 4000 fresh users
    from scipy import integrate

    n_fresh = 4000
    rows = [(0, 0, 5), (1, 0, 5), (2, 0, 1), (0, 1, 5), (1, 1, 1)]
    fresh = [(u, u % 2, 5 if u % 3 else 1) for u in range(3, 3 + n_fresh)]
    train, test = _tiny(rows, fresh, 3 + n_fresh, 2)
    log = simulate(
        make_online("item-bandit-ts", preset=preset), train, test, rounds=1, threshold=4, seed=5,
        record_log=True, updates="batched",
    ).log  # fmt: skip
    picks = log["item"][log["user"] >= 3].to_numpy()
    x, y = stats.beta(3 + offset, 2 + offset), stats.beta(2 + offset, 2 + offset)
    p0 = integrate.quad(lambda v: x.pdf(v) * y.cdf(v), 0, 1)[0]
    assert stats.binomtest(int((picks == 0).sum()), len(picks), p0).pvalue > 1e-3
