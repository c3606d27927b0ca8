"""recommend(): exclusion, padding, ties, batching; baselines and the registry."""

from __future__ import annotations

import re
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import Interactions
from receval._jit import one_at_a_time
from receval.data.synthetic import generate
from receval.errors import ColdStartError, ConfigError, DataError, NotFittedError
from receval.recommenders import knn, make, parse_params, recommend, topn
from receval.recommenders.baselines import Average, Biases, GlobalMean, MostPopular, Random
from receval.recommenders.knn import ItemKNN, UserKNN


def _random_data(seed: int, n_users: int = 30, n_items: int = 20, density: float = 0.3) -> Interactions:
    rng = np.random.default_rng(seed)
    mask = rng.random((n_users, n_items)) < density
    mask[:, 0] = True  # every user and item present
    mask[0, :] = True
    u, i = np.nonzero(mask)
    r = rng.integers(1, 6, size=len(u))
    return Interactions.from_arrays(u, i, r)


class Table:
    """A plain scorer (not a Recommender) with fixed scores."""

    def __init__(self, scores: np.ndarray):
        self.scores = np.asarray(scores, dtype=float)
        self.n_users_, self.n_items_ = self.scores.shape

    def score(self, users):
        return self.scores[np.asarray(users)]


def _brute_force(scores: np.ndarray, excl: np.ndarray, k: int) -> list[list[float]]:
    out = []
    for row, ex in zip(scores, excl, strict=True):
        vals = sorted((v for v, e in zip(row, ex, strict=True) if not e and np.isfinite(v)), reverse=True)[:k]
        out.append(vals + [np.nan] * (k - len(vals)))
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 6),
    st.integers(1, 12),
    st.integers(0, 10_000),
    st.integers(1, 12),
    st.booleans(),
)
def test_recommend_matches_brute_force(n_users, n_items, seed, k, coarse):
    k = min(k, n_items)
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 3, size=(n_users, n_items)).astype(float) if coarse else rng.random((n_users, n_items))
    scores[rng.random(scores.shape) < 0.1] = np.nan
    excl = rng.random((n_users, n_items)) < 0.3
    items, vals = recommend(Table(scores), np.arange(n_users), k, exclude=sp.csr_matrix(excl), seed=seed)
    np.testing.assert_array_equal(vals, np.array(_brute_force(scores, excl, k)))
    for u in range(n_users):
        got = items[u][items[u] >= 0]
        assert len(set(got)) == len(got)  # no duplicates
        assert not excl[u, got].any()  # nothing excluded
        np.testing.assert_array_equal(scores[u, got], vals[u][: len(got)])
        assert (items[u][len(got) :] == -1).all()  # padding only at the end


class Row(Table):
    """One row of scores for every user, scored per user (``recommend``'s general path)."""

    def __init__(self, row: np.ndarray, n_users: int):
        super().__init__(np.tile(row, (n_users, 1)))


class GlobalRow(Row):
    """The same scorer telling ``recommend`` that its row is the same for every user (popularity's path)."""

    def global_scores(self):
        return self.scores[0]


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 7),
    st.integers(1, 40),
    st.integers(0, 10_000),
    st.integers(1, 45),
    st.sampled_from(["coarse", "fine", "one"]),
    st.floats(0, 0.9),
)
def test_one_row_for_every_user_gives_the_scored_lists_bit_for_bit(n_users, n_items, seed, k, levels, excluded):
    k = min(k, n_items)
    rng = np.random.default_rng(seed)
    row = {"coarse": rng.integers(0, 3, n_items).astype(float), "fine": rng.random(n_items),
           "one": np.ones(n_items)}[levels]  # fmt: skip
    row[rng.random(n_items) < 0.1] = np.nan
    row[rng.random(n_items) < 0.05] = -np.inf
    row[rng.random(n_items) < 0.05] = np.inf
    excl = sp.csr_matrix(rng.random((n_users, n_items)) < excluded)
    users = rng.permutation(n_users)[: max(1, n_users - 1)]
    want = recommend(Row(row, n_users), users, k, exclude=excl, seed=seed)
    short = topn._SHORT_RUN
    try:
        for topn._SHORT_RUN in (short, 1):  # runs of ties bisected as lists, then searched by numpy
            got = recommend(GlobalRow(row, n_users), users, k, exclude=excl, seed=seed)
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
    finally:
        topn._SHORT_RUN = short


def test_popularity_is_ranked_once_with_its_scored_lists():
    train = _random_data(3, n_users=40, n_items=60, density=0.2)
    for model in (MostPopular(threshold=4).fit(train), Average(threshold=4).fit(train)):
        assert callable(model.global_scores)
        want = recommend(Table(model.score(np.arange(train.n_users))), np.arange(train.n_users), 10, exclude=train)
        got = recommend(model, np.arange(train.n_users), 10, exclude=train)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
    assert not hasattr(Random(), "global_scores")  # its rows differ by user


def test_ties_deterministic_per_seed_and_independent_of_batching():
    scores = np.zeros((50, 40))
    scores[:, :5] = 1.0
    model = Table(scores)
    a, _ = recommend(model, np.arange(50), 10, seed=3)
    b, _ = recommend(model, np.arange(50), 10, seed=3, batch_size=7)
    c, _ = recommend(model, np.arange(50)[::-1], 10, seed=3)
    d, _ = recommend(model, np.arange(50), 10, seed=4)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c[::-1])
    assert not np.array_equal(a, d)
    assert (np.sort(a[:, :5], axis=1) == np.arange(5)).all()  # higher scores first
    assert len({tuple(row) for row in a}) > 1  # tie orders differ between users


def test_training_items_excluded_and_padding():
    train = _random_data(1)
    model = MostPopular(count="any").fit(train)
    items, scores = recommend(model, np.arange(train.n_users), train.n_items, exclude=train)
    rated = train.to_csr().toarray() > 0
    for u in range(train.n_users):
        got = items[u][items[u] >= 0]
        assert not rated[u, got].any()
        assert len(got) == (~rated[u]).sum()
        assert np.isnan(scores[u][len(got) :]).all()
    full, _ = recommend(model, [0], 3)
    np.testing.assert_array_equal(full[0], np.argsort(-model.counts_, kind="stable")[:3])


def test_recommend_errors():
    train = _random_data(2)
    model = MostPopular().fit(train)
    with pytest.raises(ConfigError, match="larger than the catalogue"):
        recommend(model, [0], train.n_items + 1)
    with pytest.raises(ConfigError, match="positive integer"):
        recommend(model, [0], 0)
    with pytest.raises(ColdStartError, match="outside"):
        recommend(model, [train.n_users], 2)
    with pytest.raises(DataError, match="exclude covers"):
        recommend(model, [0], 2, exclude=sp.csr_matrix((3, 3)))
    with pytest.raises(NotFittedError):
        recommend(MostPopular(), [0], 2)


def test_baselines_scores():
    train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [5, 2, 4, 1, 1])
    pop = MostPopular(threshold=4).fit(train)
    np.testing.assert_array_equal(pop.score([0])[0], [1, 1, 0])
    pop_any = MostPopular(count="any", update_count="any", threshold=4).fit(train)
    np.testing.assert_array_equal(pop_any.score([0])[0], [1, 2, 2])
    pop_any.update([0, 1], [0, 0], [0.0, np.nan])
    np.testing.assert_array_equal(pop_any.score([0])[0], [2, 2, 2])
    avg = Average(threshold=4).fit(train)
    np.testing.assert_allclose(avg.score([2])[0], [2 / 3, 2 / 4, 1 / 4])
    avg.update([0, 1, 2], [2, 2, 2], [1.0, np.nan, 1.0])
    np.testing.assert_allclose(avg.score([0])[0], [2 / 3, 2 / 4, 3 / 6])
    gm = GlobalMean().fit(train)
    assert gm.predict([2], [0])[0] == pytest.approx(2.6)
    r1 = Random(seed=5).fit(train).score([0, 1, 2])
    r2 = Random(seed=5).fit(train).score([2])
    np.testing.assert_array_equal(r1[2], r2[0])
    assert not np.array_equal(Random(seed=6).fit(train).score([2]), r2)


def test_biases_matches_closed_form():
    data = _random_data(3)
    model = Biases(item_damping=5, user_damping=3, clip=False).fit(data)
    r = data.to_csr().toarray().astype(np.float64)
    rated = r > 0
    mu = r[rated].mean()
    b_i = np.where(rated, r - mu, 0).sum(0) / (5 + rated.sum(0))
    b_u = np.where(rated, r - mu - b_i[None, :], 0).sum(1) / (3 + rated.sum(1))
    np.testing.assert_allclose(model.score([4])[0], mu + b_u[4] + b_i, rtol=1e-10)
    clipped = Biases(item_damping=0, user_damping=0).fit(data).predict(data.users, data.items)
    assert clipped.min() >= 1 and clipped.max() <= 5


def test_baseline_bad_input():
    train = _random_data(4)
    with pytest.raises(NotFittedError):
        Biases().predict([0], [0])
    with pytest.raises(ColdStartError, match="item index 99"):
        Biases().fit(train).predict([0], [99])
    with pytest.raises(ConfigError, match="as many users as items"):
        Biases().fit(train).predict([0, 1], [0])
    with pytest.raises(ConfigError, match="count='some'"):
        MostPopular(count="some").fit(train)
    with pytest.raises(DataError, match="empty"):
        Biases().fit(train.subset(np.zeros(train.n_ratings, dtype=bool)))


def test_registry_parses_and_rejects():
    m = make("popularity", **parse_params(["count=any", "threshold=3"]))
    assert m.get_params() == {"count": "any", "update_count": "positive", "threshold": 3.0}
    assert make("random", seed="7").seed == 7
    with pytest.raises(ConfigError, match="unknown algorithm 'knn'"):
        make("knn")
    with pytest.raises(ConfigError, match="not one of"):
        make("popularity", count="all")
    with pytest.raises(ConfigError, match="not a valid float"):
        make("biases", item_damping="lots")
    with pytest.raises(ConfigError, match="key=value"):
        parse_params(["k50"])
    with pytest.raises(ConfigError, match="adapter prefix"):
        make("lenskit:ItemKNN")


def test_model_shortcut_is_used_unless_not_implemented():
    scores = np.random.default_rng(0).random((4, 6))

    class Shortcut(Table):
        def __init__(self, scores, answer):
            super().__init__(scores)
            self.answer, self.calls = answer, []

        def recommend_topk(self, users, k, exclude):
            self.calls.append((users.tolist(), k, exclude is None))
            return self.answer if self.answer is NotImplemented else self.answer(users, k)

    fixed = Shortcut(scores, lambda users, k: (np.zeros((len(users), k), dtype=int), np.ones((len(users), k))))
    items, _ = recommend(fixed, [1, 2], 3)
    assert items.tolist() == [[0, 0, 0], [0, 0, 0]] and fixed.calls == [([1, 2], 3, True)]
    deferred = Shortcut(scores, NotImplemented)
    items, _ = recommend(deferred, [1], 2, exclude=sp.csr_matrix(np.eye(4, 6)))
    assert items.tolist() == [np.argsort(-np.where(np.arange(6) == 1, -np.inf, scores[1]))[:2].tolist()]
    assert deferred.calls == [([1], 2, False)]


def test_parallel_kernels_run_one_thread_at_a_time_and_threads_get_the_serial_bits(monkeypatch):
    # numba's threading layers abort the process when threads launch parallel kernels at once
    monkeypatch.setattr(knn, "_NUMPY", False)  # the kernels, not the numpy path of small problems
    monkeypatch.setattr(topn, "_NUMPY", False)
    inside, most = [0], [0]

    def busy() -> None:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.01)
        inside[0] -= 1

    guarded = one_at_a_time(busy)
    threads = [threading.Thread(target=guarded) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    for kernel in (topn._topk_kernel, topn._topk_product_kernel, knn._score_rows, knn._score_candidates,
                   knn._similarity_rows, knn._similarity_topk):  # fmt: skip
        assert hasattr(kernel, "__wrapped__"), kernel

    data = generate(120, 90, 2500, n_aspects=0, seed=4)
    serial = [recommend(cls(k=7).fit(data), np.arange(data.n_users), 6, exclude=data) for cls in (ItemKNN, UserKNN)]
    results: dict[int, list] = {}

    def work(i: int) -> None:
        results[i] = [recommend(cls(k=7).fit(data), np.arange(data.n_users), 6, exclude=data)
                      for cls in (ItemKNN, UserKNN)]  # fmt: skip

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got in results.values():
        for a, b in zip(got, serial, strict=True):
            for x, y in zip(a, b, strict=True):
                np.testing.assert_array_equal(x, y)
    assert len(results) == 4


def test_the_baselines_fit_and_rank_without_importing_numba(imports_numba):
    # numba's import and kernel load (about 0.5 s) is a simulation's cost: the online keys wait for kernel_state
    assert not imports_numba(
        "from receval.recommenders import make, recommend\n"
        "for name in ('popularity', 'random', 'average', 'biases', 'global-mean'):\n"
        "    recommend(make(name).fit(train), np.arange(train.n_users), 5, exclude=train)"
    )
    assert imports_numba(
        "from receval.recommenders import make\nmake('item-bandit-ucb', threshold=4).fit(train).kernel_state()"
    )  # a simulation's first ask


def test_a_large_ranking_logs_its_size_first_and_then_the_time_left(monkeypatch, caplog, tmp_path, capsys):
    """50,000 users x 5,000,000 items ran past 90 s with no word: from LARGE_RANKING scores on, recommend logs the
    work before it starts and, after PACE_SECONDS, the time left (here both thresholds lowered to this data)."""
    import logging

    from receval.cli import main

    train = Interactions.from_arrays(np.arange(40) % 8, np.arange(40) % 20, np.arange(40) % 5 + 1.0)
    model = Table(np.random.default_rng(0).random((8, 20)))  # scored per user (popularity is ranked once)
    with caplog.at_level(logging.WARNING, logger="receval"):
        recommend(model, np.arange(8), 3, exclude=train, batch_size=1)
    assert not caplog.records  # 160 scores: nothing to say
    monkeypatch.setattr(topn, "LARGE_RANKING", 160)
    monkeypatch.setattr(topn, "PACE_SECONDS", 0.0)
    with caplog.at_level(logging.WARNING, logger="receval"):
        recommend(model, np.arange(8), 3, exclude=train, batch_size=1)
    said = [record.getMessage() for record in caplog.records]
    assert (
        said[0] == "ranking 8 users x 20 items (1.6e+02 scores): the time left follows once the first users are ranked"
    )
    assert re.fullmatch(r"1 of 8 users ranked in \d+ s: about \d+ s left", said[1])
    assert len(said) == 2  # the time left once
    # the command line prints them (warnings of the receval logger) before its result
    rows = "".join(f"u{u}\ti{i}\t{r:g}\n" for u, i, r in zip(train.users, train.items, train.ratings, strict=True))
    (tmp_path / "train.tsv").write_text("user\titem\trating\n" + rows)
    out = tmp_path / "recs.tsv"
    assert main(["recommend", "--train", str(tmp_path / "train.tsv"), "-a", "biases", "--k", "3", "-o", str(out)]) == 0
    assert "receval: ranking 8 users x 20 items (1.6e+02 scores)" in capsys.readouterr().err
