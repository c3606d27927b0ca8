"""Item-kNN top-N in sparse top-k mode on an ML-25M-sized generated set.

The set: 160,000 users x 60,000 items x 25 million ratings (``receval.data.synthetic.generate``,
MNAR, seed 0; MovieLens-25M has 162,541 users, 59,047 items, 25,000,095 ratings). A dense
60,000 x 60,000 similarity would take 28.8 GB (two with ``similarity="auto"``); the sparse
mode keeps each item's k = 50 most similar items (vector-cosine) and computes the similarity
by blocks of rows. Measured: fit (similarity + neighbourhoods) and top-10 lists for every
user with their training items excluded.

The data are generated once into a ``.npz`` cache (never committed) by a separate run, so the
peak memory of the measured run (``/usr/bin/time -v``: "Maximum resident set size") is that of
loading, fitting and recommending, not of the generator::

    python benchmarks/bench_knn_sparse.py --generate /tmp/knn25m.npz
    /usr/bin/time -v python benchmarks/bench_knn_sparse.py --data /tmp/knn25m.npz

``--users/--items/--ratings`` change the size (``--small``: 16,000 x 6,000 x 250,000). Wall and CPU time
are both printed: on a shared, loaded machine wall time inflates; CPU time (all threads: the kernels run on
every core) shows the work done.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from receval import Interactions
from receval.data.synthetic import generate
from receval.recommenders import recommend
from receval.recommenders.knn import ItemKNN


def _peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--generate", type=Path, help="generate the set into this .npz file and stop")
    parser.add_argument("--data", type=Path, help="the .npz file written by --generate")
    parser.add_argument("--users", type=int, default=160_000)
    parser.add_argument("--items", type=int, default=60_000)
    parser.add_argument("--ratings", type=int, default=25_000_000)
    parser.add_argument("--small", action="store_true", help="16,000 x 6,000 x 250,000 (smoke run)")
    parser.add_argument("--k", type=int, default=50, help="neighbours per item")
    args = parser.parse_args()
    if args.small:
        args.users, args.items, args.ratings = 16_000, 6_000, 250_000
    if args.generate is not None:
        start = time.perf_counter()
        data = generate(args.users, args.items, args.ratings, n_aspects=0, seed=0)
        np.savez(args.generate, users=data.users, items=data.items, ratings=data.ratings)
        print(f"generated {data.n_ratings:,} ratings in {time.perf_counter() - start:.1f} s -> {args.generate}")
        return
    start = time.perf_counter()
    if args.data is not None:
        with np.load(args.data) as arrays:
            data = Interactions.from_arrays(arrays["users"], arrays["items"], arrays["ratings"])
    else:
        data = generate(args.users, args.items, args.ratings, n_aspects=0, seed=0)
    print(
        f"data: {data.n_users:,} users x {data.n_items:,} items x {data.n_ratings:,} ratings "
        f"({time.perf_counter() - start:.1f} s, peak {_peak_gb():.2f} GB)"
    )
    ItemKNN(k=args.k, mode="sparse").fit(generate(50, 40, 500, n_aspects=0, seed=0))  # numba compilation
    start, cpu = time.perf_counter(), time.process_time()
    model = ItemKNN(k=args.k, mode="sparse").fit(data)
    neighbours = model.neighbours_  # made on first use: part of the fit here
    fit, fit_cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"fit ItemKNN(k={args.k}, mode='sparse'): {fit:.1f} s wall, {fit_cpu:.1f} s CPU, "
        f"{neighbours.nnz:,} neighbour entries, peak {_peak_gb():.2f} GB"
    )
    start, cpu = time.perf_counter(), time.process_time()
    items, _ = recommend(model, np.arange(data.n_users), 10, exclude=data)
    top, top_cpu = time.perf_counter() - start, time.process_time() - cpu
    print(
        f"top-10 for {len(items):,} users (training items excluded): {top:.1f} s wall, {top_cpu:.1f} s CPU, "
        f"peak {_peak_gb():.2f} GB"
    )
    print(f"total fit + top-N: {fit + top:.1f} s wall, {fit_cpu + top_cpu:.1f} s CPU")


if __name__ == "__main__":
    main()
