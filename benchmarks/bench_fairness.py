"""Speed of the popularity-bias, calibration and exposure metrics against nDCG@10 on the same input.

Workload (generated, seeded): ``--users`` users (100,000 by default), 5,000 items with 1–3 of 20
aspects each, ~20 training and ~5 held-out ratings per user drawn by popularity, and a top-100
list per user. Each metric is timed on a fresh :class:`~receval.metrics.MetricInput` (no shared
cache), best of ``--repeat``; printed: seconds and the ratio to nDCG@10 (goal ≤ 2×).

Expected exposure with K = 100 Plackett–Luce samples per user (``expected_exposure_sampled`` over
the stack of sampled top-10 lists; the sampling itself timed apart) against one deterministic
``expected_exposure@10`` (goal ≤ 20×), on ``--ee-users`` users (the K × users × 10 stack is held
in memory). The load average is printed with the figures.

Usage::

    python benchmarks/bench_fairness.py                 # 100,000 users
    python benchmarks/bench_fairness.py --users 5000    # smoke run
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import scipy.sparse as sp

from receval.metrics import MetricInput, parse_metric
from receval.metrics.exposure import expected_exposure_sampled
from receval.recommenders.stochastic import plackett_luce_rankings

N_ITEMS, N_ASPECTS, WIDTH = 5_000, 20, 100
METRICS = (
    "arp@100", "arp@100(normalize=true)", "aplt@100", "aclt@100", "pop_reo@100", "pop_rsp@100",
    "delta_gap@100", "delta_gap@100(group=niche)", "miscalibration@100", "miscalibration@100(divergence=js)",
    "miscalibration@100(weighting=rank)", "expected_exposure@100", "awrf@100", "awrf@100(target=relevance)",
)  # fmt: skip


def generate(n_users: int, seed: int = 0) -> tuple[np.ndarray, sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
    """(rankings, truth, train, aspects): popularity-skewed ratings and lists, vectorised."""
    rng = np.random.default_rng(seed)
    pop = 1.0 / np.arange(1, N_ITEMS + 1) ** 0.9
    pop /= pop.sum()
    n_aspect = rng.integers(1, 4, N_ITEMS)
    a_rows = np.repeat(np.arange(N_ITEMS), n_aspect)
    aspects = sp.csr_matrix((np.ones(a_rows.size), (a_rows, rng.integers(0, N_ASPECTS, a_rows.size))),
                            shape=(N_ITEMS, N_ASPECTS))  # fmt: skip
    aspects.data[:] = 1.0

    def ratings(per_user: int) -> sp.csr_matrix:
        rows = np.repeat(np.arange(n_users), per_user)
        matrix = sp.csr_matrix((rng.integers(1, 6, rows.size).astype(float),
                                (rows, rng.choice(N_ITEMS, rows.size, p=pop))), shape=(n_users, N_ITEMS))  # fmt: skip
        matrix.sum_duplicates()
        matrix.data = np.minimum(matrix.data, 5.0)
        return matrix

    train, truth = ratings(20), ratings(5)
    rankings = np.empty((n_users, WIDTH), dtype=np.int64)
    for start in range(0, n_users, 2_000):  # Gumbel-top-100 by popularity, in blocks of users
        keys = rng.gumbel(size=(min(2_000, n_users - start), N_ITEMS)) + np.log(pop)
        top = np.argpartition(-keys, WIDTH, axis=1)[:, :WIDTH]
        order = np.argsort(-np.take_along_axis(keys, top, axis=1), axis=1)
        rankings[start : start + len(top)] = np.take_along_axis(top, order, axis=1)
    return rankings, truth, train, aspects


def _best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--ee-users", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rankings, truth, train, aspects = generate(args.users)

    def run(metric: str, lists: np.ndarray = rankings, users: int = args.users) -> Callable[[], float]:
        parsed = parse_metric(metric)
        rows = slice(0, users)
        return lambda: parsed.compute(
            MetricInput(lists[rows], truth[rows], train=train[rows], train_all=train, aspects=aspects, threshold=4)
        )

    with open("/proc/loadavg") as f:
        print(f"load average before: {f.read().strip()}")
    print(f"{args.users:,} users x top-{WIDTH}, {N_ITEMS:,} items, {N_ASPECTS} aspects; best of {args.repeat}")
    base = _best(run("ndcg@10"), args.repeat)
    print(f"{'ndcg@10':40s} {base:8.3f} s   1.00x")
    worst = 0.0
    for metric in METRICS:
        seconds = _best(run(metric), args.repeat)
        worst = max(worst, seconds / base)
        print(f"{metric:40s} {seconds:8.3f} s  {seconds / base:5.2f}x")
    print(f"largest ratio to ndcg@10: {worst:.2f}x (goal <= 2x)")

    n = min(args.ee_users, args.users)
    scores = np.log(np.arange(WIDTH, 0, -1, dtype=np.float64))[None, :].repeat(n, axis=0)
    start = time.perf_counter()
    positions = plackett_luce_rankings(scores, 10, n_samples=100, seed=0)  # positions in each user's top 100
    sampling = time.perf_counter() - start
    samples = np.take_along_axis(np.broadcast_to(rankings[:n], (100, n, WIDTH)), positions, axis=2)
    data = MetricInput(rankings[:n], truth[:n], threshold=4)
    deterministic = _best(run("expected_exposure@10", users=n), args.repeat)
    sampled = _best(lambda: expected_exposure_sampled(data, samples, 10), args.repeat)
    print(f"expected exposure@10, {n:,} users: deterministic {deterministic:.3f} s, K=100 samples {sampled:.3f} s "
          f"({sampled / deterministic:.1f}x, goal <= 20x); Plackett-Luce sampling {sampling:.3f} s")  # fmt: skip
    with open("/proc/loadavg") as f:
        print(f"load average after: {f.read().strip()}")


if __name__ == "__main__":
    main()
