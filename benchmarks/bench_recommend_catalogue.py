"""Top-N popularity lists for 50,000 users over a catalogue of 5,000,000 items.

Workload (generated, seeded): ``--users`` users (50,000), ``--items`` items (5,000,000) and
``--ratings`` training ratings (8,000,000): every item rated once by a random user, the rest drawn
Zipf-like (so most of the catalogue ties at a count of 1), written as ``train.parquet``.

* Check first: for 300 users, each list's scores equal a plain numpy top-k of the item counts
  with the user's training items removed, and the lists equal those of the scored path (one row of
  scores per user, ranked by the selection kernels) for 20 users.
* In process: ``recommend`` on the scored path for ``--scored-users`` users (timed, extrapolated to
  every user: what the command did before popularity was ranked once) and on the ranked-once path
  for every user.
* Whole processes: ``receval recommend --train train.parquet -a popularity --k 10`` against the
  floor, a bare process that reads the same file with pyarrow and sorts the counts once
  (``numpy.argsort``). Printed: seconds, the ratio, each process's peak memory and the load.

Usage::

    python benchmarks/bench_recommend_catalogue.py
    python benchmarks/bench_recommend_catalogue.py --users 2000 --items 200000 --ratings 200000   # smoke run
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

FLOOR = """
import sys, numpy as np, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1])
items = t.column("item").to_numpy()
counts = np.bincount(items)
order = np.argsort(-counts, kind="stable")
"""


def _generate(folder: Path, n_users: int, n_items: int, n_ratings: int) -> Path:
    rng = np.random.default_rng(0)
    users = rng.integers(0, n_users, n_ratings)
    items = np.minimum(rng.zipf(1.3, n_ratings) - 1, n_items - 1)  # a few hits, a long tail of ties
    items = rng.permutation(n_items)[items]  # popular items spread over the id space
    items[:n_items] = np.arange(n_items)  # the whole catalogue in the training data
    users[:n_users] = np.arange(n_users)  # every user present
    keys = np.unique(users.astype(np.int64) * n_items + items, return_index=True)[1]
    users, items = users[keys], items[keys]
    path = folder / "train.parquet"
    table = pa.table({"user": users, "item": items, "rating": rng.integers(1, 6, len(users)).astype(float)})
    pq.write_table(table, path)
    return path


PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _run(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak MB of one process (measured from a fresh parent, so the peak is its own)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", PEAK, *cmd], check=True, capture_output=True, text=True,
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})  # fmt: skip
    return time.perf_counter() - start, int(done.stdout.split()[-1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=50_000)
    parser.add_argument("--items", type=int, default=5_000_000)
    parser.add_argument("--ratings", type=int, default=8_000_000)
    parser.add_argument("--scored-users", type=int, default=20)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()

    from receval import Interactions
    from receval.recommenders.baselines import MostPopular
    from receval.recommenders.topn import recommend

    print("load before:", " ".join(open("/proc/loadavg").read().split()[:3]))
    with tempfile.TemporaryDirectory() as tmp:
        path = _generate(Path(tmp), args.users, args.items, args.ratings)
        frame = pq.read_table(path).to_pandas()
        train = Interactions.from_arrays(frame["user"].to_numpy(), frame["item"].to_numpy(), frame["rating"].to_numpy())
        assert (train.user_ids == np.arange(args.users)).all() and (train.item_ids == np.arange(args.items)).all()
        model = MostPopular(count="any").fit(train)
        counts = np.bincount(train.items, minlength=args.items).astype(float)

        class Scored:  # the same scores, one row per user: the general path
            n_users_, n_items_ = args.users, args.items

            def score(self, users: np.ndarray) -> np.ndarray:
                return np.broadcast_to(counts, (len(users), args.items))

        users = np.arange(args.users)
        start = time.perf_counter()
        items, scores = recommend(model, users, args.k, exclude=train)
        once = time.perf_counter() - start
        seen = train.to_csr("ones").tolil().rows
        rng = np.random.default_rng(1)
        for u in rng.choice(args.users, min(300, args.users), replace=False):
            mask = np.ones(args.items, dtype=bool)
            mask[seen[u]] = False
            want = np.sort(counts[mask])[::-1][: args.k]
            assert np.array_equal(scores[u], want), u
        some = users[: args.scored_users]
        recommend(Scored(), some[:1], args.k, exclude=train)  # the kernels compiled or loaded: not timed
        start = time.perf_counter()
        ref = recommend(Scored(), some, args.k, exclude=train)
        scored = (time.perf_counter() - start) / len(some)
        assert np.array_equal(ref[0], items[: len(some)]) and np.array_equal(ref[1], scores[: len(some)])
        print("checked: scores against numpy for 300 users, lists against the scored path for", len(some), "users")
        print(f"{args.users:,} users x {args.items:,} items, {train.n_ratings:,} ratings, k={args.k}")
        print(f"scored path      {scored * 1e3:8.1f} ms a user -> {scored * args.users:8.1f} s for every user")
        print(f"ranked once      {once:8.2f} s for every user ({scored * args.users / once:.0f}x)")

        floor_wall, floor_mem = _run([sys.executable, "-c", FLOOR, str(path)])
        out = Path(tmp) / "recs.tsv"
        cmd = [sys.executable, "-m", "receval", "recommend", "--train", str(path), "-a", "popularity",
               "--param", "count=any", "--k", str(args.k), "-o", str(out)]  # fmt: skip
        ours_wall, ours_mem = _run(cmd)
        print(f"floor (read + one sort)   {floor_wall:6.2f} s, peak {floor_mem:7.0f} MB")
        print(f"receval recommend         {ours_wall:6.2f} s, peak {ours_mem:7.0f} MB")
        print(f"ratio {ours_wall / floor_wall:.1f}x")
    print("load after:", " ".join(open("/proc/loadavg").read().split()[:3]))


if __name__ == "__main__":
    main()
