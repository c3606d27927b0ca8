"""P3α (Cooper et al. 2014) and RP3β (Paudel et al. 2016) against an independent dense numpy computation."""

from __future__ import annotations

import numpy as np
import pytest

from receval import Interactions
from receval.recommenders.graph import P3alpha, RP3beta


def _data(seed: int, n_users: int = 40, n_items: int = 25, density: float = 0.25) -> Interactions:
    rng = np.random.default_rng(seed)
    users, items = np.nonzero(rng.random((n_users, n_items)) < density)
    return Interactions.from_arrays(users, items, rng.integers(1, 6, len(users)))


def _reference(x: np.ndarray, top_k: int, alpha: float, beta: float, normalize: bool) -> np.ndarray:
    """The walk written out with dense matrices: P_iu = x_ui/deg(i), P_uj = x_uj/deg(u), both to the power α;
    W = P_iu P_uj, column j times deg(j)^-β, no diagonal, each row's top_k (ties: lower index), rows to sum 1."""
    item_deg, user_deg = x.sum(axis=0), x.sum(axis=1)
    p_iu = np.divide(x.T, item_deg[:, None], out=np.zeros_like(x.T), where=item_deg[:, None] > 0) ** alpha
    p_uj = np.divide(x, user_deg[:, None], out=np.zeros_like(x), where=user_deg[:, None] > 0) ** alpha
    w = p_iu @ p_uj
    w *= np.power(item_deg, -beta, out=np.zeros_like(item_deg), where=item_deg > 0)[None, :]
    np.fill_diagonal(w, 0.0)
    out = np.zeros_like(w)
    for i, row in enumerate(w):
        order = np.lexsort((np.arange(len(row)), -row))  # by weight descending, then index
        chosen = [j for j in order[:top_k] if row[j] > 0]
        out[i, chosen] = row[chosen]
    if normalize:
        sums = out.sum(axis=1, keepdims=True)
        out = np.divide(out, sums, out=np.zeros_like(out), where=sums > 0)
    return out


def _columns_top(w: np.ndarray, top_k: int) -> np.ndarray:
    """Each column's top_k positive entries (ties: lower row), the others 0: Dacrema et al.'s similarityMatrixTopK."""
    kept = np.zeros_like(w)
    for j, column in enumerate(w.T):
        order = np.lexsort((np.arange(len(column)), -column))
        chosen = [i for i in order[:top_k] if column[i] > 0]
        kept[chosen, j] = column[chosen]
    return kept


def _assert_equal_up_to_near_ties(actual: np.ndarray, expected: np.ndarray) -> None:
    """Equal to 1e-9, except that an item tied at a row's cut (weights equal but for rounding, 1e-12) may stand in
    for another: the two computations add the same terms in different orders."""
    differ = np.abs(actual - expected) > 1e-9
    for i in np.unique(np.nonzero(differ)[0]):
        swapped = np.concatenate([actual[i][differ[i]], expected[i][differ[i]]])
        swapped = swapped[swapped > 0]
        cut = min(actual[i][actual[i] > 0].min(), expected[i][expected[i] > 0].min())
        assert np.allclose(swapped, cut, rtol=0, atol=1e-12), (i, swapped, cut)
        assert (actual[i] > 0).sum() == (expected[i] > 0).sum()


def _binary(data: Interactions, threshold: float | None) -> np.ndarray:
    x = np.zeros((data.n_users, data.n_items))
    keep = np.ones(data.n_ratings, bool) if threshold is None else data.ratings >= threshold
    x[data.users[keep], data.items[keep]] = 1.0
    return x


@pytest.mark.parametrize(
    ("seed", "top_k", "alpha", "beta", "normalize", "threshold"),
    [
        (0, 100, 1.0, 0.6, True, None),
        (1, 5, 1.0, 0.6, False, 4.0),  # top-5 of binary data: many ties at the cut
        (2, 3, 0.5, 0.0, True, 3.0),
        (3, 10, 1.7, 1.2, False, None),
        (4, 1, 1.0, 0.3, True, None),
    ],
)
def test_rp3beta_equals_the_dense_computation(seed, top_k, alpha, beta, normalize, threshold):
    """The rows' selection against the dense walk (near ties aside), then the columns' selection of it exactly."""
    data = _data(seed)
    params = {"topK": top_k, "alpha": alpha, "beta": beta, "normalize_similarity": normalize, "threshold": threshold}
    rows_only = RP3beta(**params, column_topK=False).fit(data).weights_.toarray()
    x = _binary(data, threshold)
    _assert_equal_up_to_near_ties(rows_only, _reference(x, top_k, alpha, beta, normalize))
    model = RP3beta(**params).fit(data)
    np.testing.assert_array_equal(model.weights_.toarray(), _columns_top(rows_only, top_k))
    assert np.all(np.diff(model.weights_.indptr) <= top_k)
    assert np.all(np.diff(model.weights_.tocsc().indptr) <= top_k)
    np.testing.assert_allclose(model.score(np.arange(data.n_users)), x @ model.weights_.toarray(), rtol=0, atol=1e-9)


@pytest.mark.parametrize(("top_k", "alpha", "normalize"), [(100, 1.0, False), (4, 0.8, True)])
def test_p3alpha_equals_the_dense_computation_without_penalty(top_k, alpha, normalize):
    data = _data(5)
    model = P3alpha(topK=top_k, alpha=alpha, normalize_similarity=normalize, threshold=None).fit(data)
    rows_only = P3alpha(topK=top_k, alpha=alpha, normalize_similarity=normalize, threshold=None, column_topK=False)
    expected = _reference(_binary(data, None), top_k, alpha, 0.0, normalize)
    _assert_equal_up_to_near_ties(rows_only.fit(data).weights_.toarray(), expected)
    np.testing.assert_array_equal(model.weights_.toarray(), _columns_top(rows_only.weights_.toarray(), top_k))
    same = RP3beta(topK=top_k, alpha=alpha, beta=0.0, normalize_similarity=normalize, threshold=None).fit(data)
    assert (model.weights_ != same.weights_).nnz == 0


def test_defaults_follow_dacrema_et_al():
    assert P3alpha().get_params() == {
        "topK": 100,
        "alpha": 1.0,
        "normalize_similarity": False,
        "column_topK": True,
        "threshold": 4.0,
    }
    assert RP3beta().get_params() == {
        "topK": 100,
        "alpha": 1.0,
        "beta": 0.6,
        "normalize_similarity": True,
        "column_topK": True,
        "threshold": 4.0,
    }


def test_items_without_interactions_get_no_weights():
    data = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 0], [5, 5, 5, 1, 4])  # item 2: one rating below 4
    w = RP3beta(threshold=4).fit(data).weights_.toarray()
    assert w[0, 1] > 0 and w[1, 0] > 0
    assert not w[2].any() and not w[:, 2].any()


def test_powers_that_underflow_neither_corrupt_memory_nor_pass_unchecked(tmp_path):
    """(1/deg)^α underflows to 0 for α = 200 past degree 40 and for α = 1e308 past degree 1: the walk once took a
    weight of 0 for an unvisited item and overran its buffer (the process aborted with a double free). In a
    subprocess, so that a crash fails this test rather than ending the run; a non-finite power is refused."""
    import os
    import subprocess
    import sys

    rng = np.random.default_rng(0)
    users, items = np.nonzero(rng.random((80, 120)) < 0.6)  # users of ~70 items, items of ~50 users
    ratings = rng.integers(4, 6, len(users))  # all at or above the default threshold 4
    lines = "".join(f"u{u}\ti{i}\t{r}\n" for u, i, r in zip(users, items, ratings, strict=True))
    (tmp_path / "train.tsv").write_text("user\titem\trating\n" + lines)
    run = [sys.executable, "-m", "receval", "recommend", "--train", str(tmp_path / "train.tsv"), "--k", "5"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for algorithm, param in [("p3alpha", "alpha=200"), ("p3alpha", "alpha=1e308"), ("rp3beta", "alpha=300")]:
        out = tmp_path / f"{algorithm}-{param}.tsv"
        done = subprocess.run([*run, "-a", algorithm, "-p", param, "-o", str(out)], env=env, capture_output=True)
        assert done.returncode == 0, (param, done.returncode, done.stderr.decode()[-500:])
        assert out.exists()
    done = subprocess.run(
        [*run, "-a", "rp3beta", "-p", "beta=inf", "-o", str(tmp_path / "x.tsv")],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "beta must be >= 0 and finite" in done.stderr and "inf" in done.stderr
    assert "Traceback" not in done.stderr
