"""Rolling windows × 5 on MovieLens latest-small against one holdout run: the goal is at most 5.5×.

A rolling backtest fits and evaluates one model per window; five windows should cost about
five holdout runs, not more (the windows' splits are one pass over the pairs). Times, in one
process, the best of ``--repeat`` of:

* the anchor: ``split_by_name(data, "temporal", at=...)`` then
  :func:`receval.evaluation.evaluate_model` (``--algorithm``, nDCG@10) on the one fold;
* ours: ``split_by_name(data, "rolling", windows=5)`` then ``evaluate_model`` on each window.

Before timing, each window is checked: no training pair at or after its test window, every
test pair inside it, and its nDCG@10 is that of the same split made by hand with masks.
Printed: the anchor, ours, the ratio (goal ≤ 5.5), peak memory (ru_maxrss) and the load average.

Usage::

    python benchmarks/bench_rolling.py --data PATH/ml-latest-small [--algorithm item-knn]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np

from receval.data import load
from receval.evaluation import evaluate_model
from receval.recommenders import make
from receval.split import split_by_name


def _holdout(data, cut, algorithm):
    ((train, test),) = split_by_name(data, "temporal", at=cut)
    return [evaluate_model(make(algorithm), train, test, ["ndcg@10"], cold_start="exclude").summary["ndcg@10"]]


def _rolling(data, windows, algorithm):
    return [
        evaluate_model(make(algorithm), train, test, ["ndcg@10"], cold_start="exclude").summary["ndcg@10"]
        for train, test in split_by_name(data, "rolling", windows=windows)
    ]


def _check(data, windows, algorithm, values) -> None:
    t = data.timestamps.astype(np.int64)  # latest-small has one rating per pair: a pair's time is its row's
    t0, t1 = int(t.min()), int(t.max()) + 1
    length = (t1 - t0) / (windows + 1)
    for j, (train, test) in enumerate(split_by_name(data, "rolling", windows=windows)):
        start, end = t1 - (windows - j) * length, t1 - (windows - j - 1) * length
        assert train.timestamps.max() < start <= test.timestamps.min() and test.timestamps.max() < end
        by_hand_train, by_hand_test = data.subset(t < start), data.subset((t >= start) & (t < end))
        assert len(by_hand_train) == len(train) and len(by_hand_test) == len(test)
        res = evaluate_model(make(algorithm), by_hand_train, by_hand_test, ["ndcg@10"], cold_start="exclude")
        assert res.summary["ndcg@10"] == values[j], (j, res.summary, values[j])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True)
    parser.add_argument("--format", default="movielens-latest")
    parser.add_argument("--algorithm", default="item-knn")
    parser.add_argument("--windows", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = load(args.data, args.format)
    cut = int(np.quantile(data.timestamps, 0.8))
    values = _rolling(data, args.windows, args.algorithm)  # also the warm-up (numba compiles once)
    _check(data, args.windows, args.algorithm, values)
    _holdout(data, cut, args.algorithm)
    print(f"checked {args.windows} windows: nDCG@10 {', '.join(f'{v:.4f}' for v in values)}")
    best = {"holdout": np.inf, "rolling": np.inf}
    for _ in range(args.repeat):
        for name, run in (("holdout", lambda: _holdout(data, cut, args.algorithm)),
                          ("rolling", lambda: _rolling(data, args.windows, args.algorithm))):  # fmt: skip
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"{data.n_ratings:,} ratings, {args.algorithm}")
    print(f"anchor (one temporal holdout)  {best['holdout']:.3f} s")
    print(f"ours (rolling x {args.windows})            {best['rolling']:.3f} s")
    print(f"ratio {best['rolling'] / best['holdout']:.2f} (goal <= 5.5); "
          f"peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")  # fmt: skip


if __name__ == "__main__":
    main()
