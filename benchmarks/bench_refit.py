"""Cost of updating the offline models every round in the cyclic simulation (issue 25).

The thesis' loop (Cuesta Fernández, BSc thesis, UAM 2021) updates every model after
every round; receval refits the offline models (user-kNN, item-kNN, HKV) every
``refit_every`` rounds, 10 by default and 1 in the ``thesis`` preset. This runs 500
rounds on MovieLens 100K (80/20 holdout, λ = 4, one recommendation per user and round)
for each model with ``refit_every=10`` (the anchor) and ``refit_every=1`` in the same
process, and prints each run's whole wall and CPU time and the ratio 1 / 10.

numba's compilation is excluded: a one-round warm-up of each model runs first.
Skips (exit 0) when ../shared/data/ml-100k is absent.

Usage::

    python benchmarks/bench_refit.py            # 500 rounds
    python benchmarks/bench_refit.py --rounds 50
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

from receval.data.loaders import load
from receval.recommenders.bandits import make_online
from receval.simulate import simulate
from receval.split import holdout

ML100K = Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"
MODELS = ("item-knn", "user-knn", "hkv")


def _run(name: str, train, test, rounds: int, refit_every: int) -> tuple[float, float, float]:
    """Whole wall and CPU seconds of one simulation, and its final Recall."""
    cpu = time.process_time()
    start = time.perf_counter()
    traj = simulate(make_online(name), train, test, rounds=rounds, threshold=4, refit_every=refit_every, seed=0)
    return time.perf_counter() - start, time.process_time() - cpu, traj.final()["recall"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=500)
    args = parser.parse_args()
    if not ML100K.exists():
        print(f"skipped: MovieLens 100K not found at {ML100K}")
        return 0
    train, test = holdout(load(ML100K, "ml-100k"), 0.2, seed=0)
    print(f"MovieLens 100K: {train.n_users} users, {train.n_items} items, {args.rounds} rounds, λ = 4")
    print(f"{'model':10s} {'refit':>5s} {'wall s':>8s} {'cpu s':>8s} {'recall':>7s}")
    for name in MODELS:
        _run(name, train, test, 1, 1)  # warm-up: numba compiles (or loads) the model's kernels and the loop
        times = {}
        for every in (10, 1):
            wall, cpu, recall = _run(name, train, test, args.rounds, every)
            times[every] = wall
            print(f"{name:10s} {every:5d} {wall:8.1f} {cpu:8.1f} {recall:7.4f}")
        print(f"{name:10s} ratio refit 1 / refit 10 (wall): {times[1] / times[10]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
