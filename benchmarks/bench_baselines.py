"""Fit + top-10 for every user of MovieLens-100K ``u1.base``: the strong simple baselines against their anchors.

For each model, in the same process and on the same binary matrix (ratings >= 4), receval's
``make(name).fit(train)`` + :func:`receval.recommenders.recommend` (top-10, training items excluded) is
timed against an anchor doing the same job its own way, and the ratio ours / anchor is printed with the
mean share of each user's top-10 that both lists hold:

* ``ease``: a naive numpy EASE^R (``np.linalg.inv`` of the dense Gram matrix, ``X @ B`` for all users at
  once, ``argpartition`` + ``argsort`` per row);
* ``p3alpha``, ``rp3beta``: the walk with dense numpy matrices (``P_iu @ P_uj`` whole, per-row ``argsort``
  for the top-``topK`` neighbours, then per column, as Dacrema et al.'s implementation selects them), then as
  EASE^R's anchor;
* ``slim``: Dacrema et al.'s loop (one scikit-learn ``ElasticNet.fit`` per item with its default checks,
  the item's column zeroed in place), then as above;
* ``ials``: ``implicit``'s ``AlternatingLeastSquares`` fitted directly and its own ``recommend`` with
  ``filter_already_liked_items`` (the same factors as ours: same seed, one BLAS thread).

Each side runs ``--runs`` times, interleaved; the minimum wall and CPU times are printed (CPU: this
process's, all threads; on a shared machine wall time inflates; read the load averages printed at the
start and the end). numba's compilation of receval's kernels is
timed once, before, on a tiny set. Skips (exit 0, a message) when ``../shared/data/ml-100k`` is absent.

Usage::

    python benchmarks/bench_baselines.py              # every model, 3 runs each
    python benchmarks/bench_baselines.py --models ease rp3beta --runs 5
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import scipy.sparse as sp

from receval import Interactions
from receval.recommenders import make, recommend
from receval.recommenders.linear import interaction_matrix

ML100K = Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"
K = 10
THRESHOLD = 4.0
MODELS = ("ease", "p3alpha", "rp3beta", "slim", "ials")
PARAMS = {"slim": {"alpha": 0.01, "l1_ratio": 0.1}, "ials": {"num_threads": 1}}  # slim: the anchor's penalty


def _u1(folder: Path) -> Interactions:
    import pandas as pd

    frame = pd.read_csv(folder / "u1.base", sep="\t", names=["user", "item", "rating", "timestamp"])
    return Interactions.from_frame(frame, rating="rating", name="ml-100k u1.base")


def _top(scores: np.ndarray, seen: sp.csr_matrix) -> np.ndarray:
    """Each row's top-K unseen items, by argpartition then argsort (numpy's usual way)."""
    scores = scores.copy()
    scores[seen.nonzero()] = -np.inf
    part = np.argpartition(-scores, K, axis=1)[:, :K]
    order = np.argsort(-np.take_along_axis(scores, part, axis=1), axis=1, kind="stable")
    return np.take_along_axis(part, order, axis=1)


def _anchor_ease(x: sp.csr_matrix, seen: sp.csr_matrix) -> np.ndarray:
    dense = x.toarray()
    p = np.linalg.inv(dense.T @ dense + 500.0 * np.eye(dense.shape[1]))
    b = np.eye(len(p)) - p / np.diag(p)
    np.fill_diagonal(b, 0.0)
    return _top(dense @ b, seen)


def _anchor_walk(x: sp.csr_matrix, seen: sp.csr_matrix, beta: float, normalize: bool, top_k: int = 100) -> np.ndarray:
    dense = x.toarray()
    item_deg, user_deg = dense.sum(axis=0), dense.sum(axis=1)
    p_iu = np.divide(dense.T, item_deg[:, None], out=np.zeros_like(dense.T), where=item_deg[:, None] > 0)
    p_uj = np.divide(dense, user_deg[:, None], out=np.zeros_like(dense), where=user_deg[:, None] > 0)
    w = p_iu @ p_uj
    w *= np.power(item_deg, -beta, out=np.zeros_like(item_deg), where=item_deg > 0)[None, :]
    np.fill_diagonal(w, 0.0)
    keep = np.argsort(-w, axis=1)[:, :top_k]
    sparse_w = np.zeros_like(w)
    np.put_along_axis(sparse_w, keep, np.take_along_axis(w, keep, axis=1), axis=1)
    if normalize:
        sums = sparse_w.sum(axis=1, keepdims=True)
        sparse_w = np.divide(sparse_w, sums, out=np.zeros_like(sparse_w), where=sums > 0)
    drop = np.argsort(-sparse_w, axis=0)[top_k:]  # each column's top_k (similarityMatrixTopK)
    np.put_along_axis(sparse_w, drop, 0.0, axis=0)
    return _top(dense @ sparse_w, seen)


def _anchor_slim(x: sp.csr_matrix, seen: sp.csr_matrix, top_k: int = 100) -> np.ndarray:
    import warnings

    from sklearn.linear_model import ElasticNet

    urm = sp.csc_matrix(x)
    net = ElasticNet(alpha=0.01, l1_ratio=0.1, positive=True, fit_intercept=False, copy_X=False, precompute=True,
                     selection="random", max_iter=100, tol=1e-4, random_state=0)  # fmt: skip
    rows, cols, vals = [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for j in range(urm.shape[1]):
            y = urm[:, j].toarray()
            lo, hi = urm.indptr[j], urm.indptr[j + 1]
            saved = urm.data[lo:hi].copy()
            urm.data[lo:hi] = 0.0
            net.fit(urm, y)
            urm.data[lo:hi] = saved
            coef = net.sparse_coef_
            best = np.argsort(-coef.data)[:top_k]
            rows.append(coef.indices[best])
            cols.append(np.full(len(best), j))
            vals.append(coef.data[best])
    w = sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(x.shape[1],) * 2)
    return _top((x @ w).toarray(), seen)


def _anchor_ials(x: sp.csr_matrix, seen: sp.csr_matrix) -> np.ndarray:
    from implicit.cpu.als import AlternatingLeastSquares
    from threadpoolctl import threadpool_limits

    liked = sp.csr_matrix(x, dtype=np.float32)
    with threadpool_limits(1, "blas"):
        model = AlternatingLeastSquares(factors=100, regularization=0.01, alpha=1.0, iterations=15, random_state=0,
                                        num_threads=1)  # fmt: skip
        model.fit(liked, show_progress=False)
    filtered = sp.csr_matrix(seen, dtype=np.float32)
    ids, _ = model.recommend(np.arange(x.shape[0]), filtered, N=K, filter_already_liked_items=True)
    return np.asarray(ids)


ANCHORS = {
    "ease": ("numpy EASE^R (inv, dense scores)", _anchor_ease),
    "p3alpha": ("dense numpy walk", lambda x, seen: _anchor_walk(x, seen, 0.0, False)),
    "rp3beta": ("dense numpy walk", lambda x, seen: _anchor_walk(x, seen, 0.6, True)),
    "slim": ("Dacrema et al.'s ElasticNet loop", _anchor_slim),
    "ials": ("implicit ALS + recommend", _anchor_ials),
}


def _overlap(ours: np.ndarray, theirs: np.ndarray) -> float:
    shares = [len(set(a[a >= 0]) & set(b[b >= 0])) / max(1, (a >= 0).sum()) for a, b in zip(ours, theirs, strict=True)]
    return float(np.mean(shares))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ml100k", type=Path, default=ML100K)
    parser.add_argument("--models", nargs="+", choices=MODELS, default=list(MODELS))
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if not (args.ml100k / "u1.base").exists():
        print(f"skipped: MovieLens-100K not found at {args.ml100k}")
        return 0
    print(f"load average at start: {os.getloadavg()}")
    train = _u1(args.ml100k)
    x = interaction_matrix(train, THRESHOLD)
    seen = train.to_csr("ones")  # every rated item is excluded from the lists, as recommend(exclude=train) does
    users = np.arange(train.n_users)
    tiny = Interactions.from_arrays([0, 0, 1, 1], [0, 1, 1, 2], [5, 4, 5, 1])
    start = time.perf_counter()
    for name in args.models:
        recommend(make(name, **PARAMS.get(name, {})).fit(tiny), [0, 1], 1, exclude=tiny)
    print(f"warm-up on a tiny set (imports, numba compilation): {time.perf_counter() - start:.1f} s")
    print(f"{train.n_users} users x {train.n_items} items, {x.nnz:,} interactions (ratings >= {THRESHOLD:g}), top-{K}")
    for name in args.models:
        label, anchor = ANCHORS[name]

        def ours(name=name):
            model = make(name, threshold=THRESHOLD, **PARAMS.get(name, {})).fit(train)
            return recommend(model, users, K, exclude=train)[0]

        wall: dict[str, list[float]] = {"ours": [], "anchor": []}
        cpu: dict[str, list[float]] = {"ours": [], "anchor": []}
        lists = {}
        for _ in range(args.runs):
            for side, job in (("ours", ours), ("anchor", lambda anchor=anchor: anchor(x, seen))):
                tick, tock = time.perf_counter(), time.process_time()
                lists[side] = job()
                wall[side].append(time.perf_counter() - tick)
                cpu[side].append(time.process_time() - tock)
        ours_s, anchor_s = min(wall["ours"]), min(wall["anchor"])
        ours_cpu, anchor_cpu = min(cpu["ours"]), min(cpu["anchor"])
        overlap = _overlap(lists["ours"], lists["anchor"])
        print(
            f"  {name:<8} receval {ours_s:6.2f} s ({ours_cpu:.2f} CPU)   "
            f"{label} {anchor_s:6.2f} s ({anchor_cpu:.2f} CPU)   "
            f"ours/anchor {ours_s / anchor_s:4.2f} wall, {ours_cpu / anchor_cpu:4.2f} CPU   "
            f"top-{K} overlap {overlap:.3f}"
        )
    print(f"load average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
