"""Speed of αβ-nDCG@10 and α-nDCG@10 at MovieLens-1M size, and α-nDCG against ir-measures (pyndeval).

Workload (generated, seeded): 6,040 users, 3,706 items with 1–3 of 19 aspects each
(genre-like, skewed), ~165 ratings per user split 80/20 into train and truth
(ratings 1–5), and a top-10 list per user drawn from popularity-biased sampling.

Timed in this process after one warm-up call on a tiny input (numba compilation is
reported separately as "first call"):

* receval ``ab_ndcg`` @10 (``gamma="train"``, ideal over truth + unrated items; default
  α and α = 0.5, where unrated items carry gain) and ``alpha_ndcg`` @10 — target under
  1 s each;
* the anchor: ``ir_measures.pyndeval`` computing alpha_nDCG@10 on the same lists and
  judgments (query = user, subtopic = aspect, one qrel per relevant item and aspect),
  timed with its inputs already built as ir-measures objects, and also including the
  conversion from arrays. Target: receval at least 10x faster. The per-user values of
  both are compared (max abs difference printed).

Usage::

    python benchmarks/bench_aspects.py              # 6,040 users
    python benchmarks/bench_aspects.py --users 300  # smoke run
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from receval.metrics.aspects import ab_ndcg, alpha_ndcg

N_ITEMS, N_ASPECTS = 3_706, 19


def generate(n_users: int, seed: int = 0):
    """(rankings, truth, train, aspects) shaped like MovieLens-1M with genres."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.full(N_ASPECTS, 0.5))
    rows, cols = [], []
    for i in range(N_ITEMS):
        for a in rng.choice(N_ASPECTS, size=rng.integers(1, 4), replace=False, p=weights):
            rows.append(i)
            cols.append(a)
    aspects = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(N_ITEMS, N_ASPECTS))
    pop = 1.0 / np.arange(1, N_ITEMS + 1) ** 0.8
    pop /= pop.sum()
    t_rows, t_cols, t_data, r_rows, r_cols, r_data = [], [], [], [], [], []
    rankings = np.empty((n_users, 10), dtype=np.int64)
    for u in range(n_users):
        n = int(np.clip(rng.lognormal(4.6, 0.9), 20, 2000))
        items = rng.choice(N_ITEMS, size=n, replace=False, p=pop)
        ratings = rng.integers(1, 6, n).astype(float)
        test = rng.random(n) < 0.2
        t_rows += [u] * int(test.sum())
        t_cols += list(items[test])
        t_data += list(ratings[test])
        r_rows += [u] * int((~test).sum())
        r_cols += list(items[~test])
        r_data += list(ratings[~test])
        candidates = np.setdiff1d(rng.choice(N_ITEMS, size=60, replace=False, p=pop), items[~test])
        rankings[u] = candidates[:10]
    truth = sp.csr_matrix((t_data, (t_rows, t_cols)), shape=(n_users, N_ITEMS))
    train = sp.csr_matrix((r_data, (r_rows, r_cols)), shape=(n_users, N_ITEMS))
    truth.sort_indices()
    train.sort_indices()
    return rankings, truth, train, aspects


def _best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _ir_inputs(rankings, truth, aspects):
    import ir_measures

    qrels, run = [], []
    for u in range(truth.shape[0]):
        row = slice(truth.indptr[u], truth.indptr[u + 1])
        for item, r in zip(truth.indices[row], truth.data[row], strict=True):
            if r >= 1:
                for a in aspects.indices[aspects.indptr[item] : aspects.indptr[item + 1]]:
                    qrels.append(ir_measures.Qrel(str(u), f"d{10**6 - item:07d}", 1, str(a)))
        items = [i for i in rankings[u] if i >= 0]
        run += [ir_measures.ScoredDoc(str(u), f"d{10**6 - i:07d}", float(len(items) - j)) for j, i in enumerate(items)]
    return qrels, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=6_040)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rankings, truth, train, aspects = generate(args.users, args.seed)
    print(f"{args.users} users, {N_ITEMS} items, {N_ASPECTS} aspects, {truth.nnz} truth / {train.nnz} train ratings")

    start = time.perf_counter()
    tiny = (rankings[:2], truth[:2], aspects)
    alpha_ndcg(*tiny, k=10)
    ab_ndcg(*tiny, train[:2], k=10, rmax=5)
    print(f"first call (numba compile or cache load): {time.perf_counter() - start:.2f} s")

    t_ab = _best(lambda: ab_ndcg(rankings, truth, aspects, train, k=10, rmax=5), args.repeat)
    t_ab05 = _best(lambda: ab_ndcg(rankings, truth, aspects, train, k=10, rmax=5, alpha=0.5), args.repeat)
    t_alpha = _best(lambda: alpha_ndcg(rankings, truth, aspects, k=10), args.repeat)
    print(f"receval ab_ndcg@10     : {t_ab:.3f} s  (target < 1 s)")
    print(f"  with alpha = 0.5     : {t_ab05:.3f} s  (target < 1 s)")
    print(f"receval alpha_ndcg@10  : {t_alpha:.3f} s  (target < 1 s)")

    import ir_measures

    start = time.perf_counter()
    qrels, run = _ir_inputs(rankings, truth, aspects)
    t_conv = time.perf_counter() - start
    measure = ir_measures.alpha_nDCG @ 10
    start = time.perf_counter()
    ref = np.full(truth.shape[0], np.nan)
    for m in ir_measures.pyndeval.iter_calc([measure], qrels, run):
        ref[int(m.query_id)] = m.value
    t_ref = time.perf_counter() - start
    ours = alpha_ndcg(rankings, truth, aspects, k=10)
    scored = ~np.isnan(ref)
    print(f"ir-measures (pyndeval) alpha_nDCG@10: {t_ref:.3f} s evaluate, {t_conv:.3f} s building its inputs")
    print(f"speed-up, evaluate only      : {t_ref / t_alpha:.1f}x  (target >= 10x)")
    print(f"speed-up, with input building: {(t_ref + t_conv) / t_alpha:.1f}x")
    print(f"max |receval - pyndeval| over {int(scored.sum())} users: {np.max(np.abs(ours[scored] - ref[scored])):.2e}")


if __name__ == "__main__":
    main()
