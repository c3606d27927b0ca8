"""Speed of the sequential baselines ``markov`` and ``sknn`` against a plain-Python SKNN in the same run.

Workload: MovieLens-latest-small (610 users, 9,724 items, 100,836 ratings with timestamps) when
``../shared/data/ml-latest-small`` exists, else a generated log of the same shape (seeded).

Timed: ``markov`` and ``sknn`` (defaults, and V-SKNN) fit + score of every user; the anchor is
tests/test_sequential.py's loop transcription of Ludewig & Jannach's formulas, timed on ``--sample`` users and
scaled to all users (it re-reads every history for each user, as a per-user loop does: the ratio says how far a
direct transcription is from the sparse formulation, not how a tuned loop would do). The scores of the sampled
users are compared (max abs difference printed). Report the load
average with the figures.

Usage::

    python benchmarks/bench_sequential.py
    python benchmarks/bench_sequential.py --sample 20
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

from receval.data.interactions import Interactions
from receval.data.synthetic import generate
from receval.recommenders import make

ROOT = Path(__file__).resolve().parents[1]


def load() -> Interactions:
    path = ROOT.parent / "shared" / "data" / "ml-latest-small" / "ratings.csv"
    if path.exists():
        import pandas as pd

        frame = pd.read_csv(path)
        return Interactions.from_frame(
            frame, user="userId", item="movieId", rating="rating", timestamp="timestamp", name="ml-latest-small"
        )
    return generate(610, 9_724, 100_836, seed=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=30, help="users scored by the plain-Python reference")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "tests"))
    from test_sequential import _reference_sknn

    data = load()
    users = np.arange(data.n_users)
    print(f"{data.name or 'generated'}: {data.n_users:,} users, {data.n_items:,} items, {data.n_ratings:,} rows")
    print(f"load average: {os.getloadavg()}")
    sample = np.random.default_rng(0).choice(data.n_users, min(args.sample, data.n_users), replace=False)
    for name, params in (("markov", {}), ("sknn", {}), ("sknn", {"weighting": "linear"})):
        start = time.perf_counter()
        model = make(name, **params).fit(data)
        scores = model.score(users)
        took = time.perf_counter() - start
        line = f"{name} {params or ''}: fit + score {data.n_users:,} users {took:.2f} s"
        if name == "sknn":
            m = model.get_params()
            start = time.perf_counter()
            ref = np.stack(
                [
                    _reference_sknn(data, u, m["k"], m["sample_size"], m["session_length"], m["weighting"])
                    for u in sample
                ]
            )
            loop = (time.perf_counter() - start) * data.n_users / len(sample)
            diff = float(np.abs(ref - scores[sample]).max())
            line += f"; plain-Python loop ~{loop:.1f} s for all users (ratio {loop / took:.0f}x), max |diff| {diff:.1e}"
        print(line)


if __name__ == "__main__":
    main()
