"""Benchmark: IPS / SNIPS Recall@10 and nDCG@10 against the naive metric, 100,000 users × top-100.

Workload (issue 17): 100,000 users, top-100 lists over 20,000 items, ~32 graded test
ratings per user, each with a propensity (drawn from a popularity power law). The
metric computation alone is timed — rankings matrix, truth CSR and the propensities
of the test ratings in, the aggregated value out — as
``parse_metric(m).compute(MetricInput(...))``; a fresh :class:`MetricInput` per call,
so the shared grade lookup is paid by every estimator (as in one evaluation of one
metric). Median of ``--repeat`` runs after one warm-up; the target is IPS/SNIPS at
most 1.5 × the naive metric.

Run:  python benchmarks/bench_debias.py            (100,000 users)
      python benchmarks/bench_debias.py --quick    (5,000 users, a smoke run)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from receval.metrics.debiased import Propensities
from receval.metrics.registry import MetricInput, parse_metric

LIST, RATED = 100, 32


def make_input(n_users: int, n_items: int, seed: int = 0):
    """Rankings (n_users x 100), truth CSR (~32 ratings per user) and the ratings' propensities."""
    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, n_items + 1) ** 0.8
    popularity /= popularity.sum()
    draws = np.sort(rng.choice(n_items, size=(n_users, 40), p=popularity), axis=1)
    fresh = np.ones_like(draws, dtype=bool)
    fresh[:, 1:] = draws[:, 1:] != draws[:, :-1]
    keep = fresh & (np.cumsum(fresh, axis=1) <= RATED)
    users = np.repeat(np.arange(n_users), keep.sum(axis=1))
    truth = sp.csr_matrix(
        (rng.integers(1, 6, keep.sum()).astype(np.float32), (users, draws[keep])), shape=(n_users, n_items)
    )
    truth.sort_indices()
    cand = np.concatenate([np.where(keep, draws, -1)[:, :RATED], rng.integers(0, n_items, (n_users, 130))], axis=1)
    priority = rng.random(cand.shape)
    priority[cand < 0] = np.inf
    order = np.argsort(priority, axis=1)
    cand = np.take_along_axis(cand, order, axis=1)
    ranked = np.full((n_users, LIST), -1, dtype=np.int32)
    for u in range(n_users):  # distinct items, first 100
        row = cand[u][cand[u] >= 0]
        _, first = np.unique(row, return_index=True)
        picked = row[np.sort(first)][:LIST]
        ranked[u, : len(picked)] = picked
    p = np.clip(popularity[truth.indices] * n_items * 0.05, 0.01, 1.0)
    props = Propensities(truth=p, population=float(n_users * n_items), n_items=n_items, model="popularity")
    return ranked, truth, props


def time_metrics(metrics: list[str], ranked, truth, props, repeat: int) -> dict[str, tuple[float, float]]:
    """Minimum time of each metric over ``repeat`` rounds, the metrics interleaved within a round.

    Interleaving and the minimum keep the ratios fair on a machine shared with other work.
    """
    specs = {m: parse_metric(m) for m in metrics}

    def run(metric: str) -> float:
        data = MetricInput(ranked, truth, threshold=4, propensities={"popularity": props})
        return specs[metric].compute(data)

    values = {m: run(m) for m in metrics}  # warm-up (numba compilation, caches)
    best = dict.fromkeys(metrics, float("inf"))
    for _ in range(repeat):
        for m in metrics:
            start = time.perf_counter()
            run(m)
            best[m] = min(best[m], time.perf_counter() - start)
    return {m: (best[m], values[m]) for m in metrics}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    n_users = 5_000 if args.quick else 100_000
    ranked, truth, props = make_input(n_users, 20_000)
    print(f"{n_users:,} users x top-{LIST}, {truth.nnz:,} test ratings; minimum of {args.repeat} interleaved runs")
    for base in ("recall@10", "ndcg@10"):
        names = [base] + [f"{base}(estimator={est},propensity=popularity)" for est in ("ips", "snips")]
        timed = time_metrics(names, ranked, truth, props, args.repeat)
        naive = timed[base][0]
        print(f"{base:<10} naive {naive * 1000:8.1f} ms")
        for est, name in zip(("ips", "snips"), names[1:], strict=True):
            t, value = timed[name]
            print(f"{'':<10} {est:<5} {t * 1000:8.1f} ms  ratio {t / naive:4.2f}  (value {value:.4f})")


if __name__ == "__main__":
    main()
