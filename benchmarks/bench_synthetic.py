"""Time and memory of the synthetic generator at MovieLens sizes.

Anchor: a plain numpy generator of the same model (per-user ``Generator.choice`` without
replacement over the item exposure weights, then numpy gathers of the latent factors);
it is run for the sizes where it finishes in reasonable time.

    .venv/bin/python benchmarks/bench_synthetic.py --quick   # ML-100k size only
    .venv/bin/python benchmarks/bench_synthetic.py           # ML-100k, ML-1M, ML-25M sizes
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np
from scipy.special import expit

from receval.data.synthetic import generate, generate_with_truth

SIZES = {
    "ml-100k": (943, 1682, 100_000),
    "ml-1m": (6040, 3706, 1_000_209),
    "ml-25m": (162_541, 59_047, 25_000_095),
}
ANCHOR_UP_TO = 1_000_209  # rows; the per-user loop of the anchor is too slow beyond


def naive(n_users: int, n_items: int, n_ratings: int, seed: int = 0) -> np.ndarray:
    """The same kind of data the straightforward way: per-user sampling, numpy gathers."""
    truth = generate_with_truth(n_users, n_items, 1, seed=seed)  # reuse the model's parameters
    prefs, p = truth._preferences, truth.item_popularity
    rng = np.random.default_rng(seed)
    activity = rng.lognormal(0, 1, n_users)
    counts = rng.multinomial(n_ratings, activity / activity.sum())
    users, items = [], []
    for u, c in enumerate(np.minimum(counts, n_items)):
        users.append(np.full(c, u))
        items.append(rng.choice(n_items, size=c, replace=False, p=p))
    u = np.concatenate(users)
    i = np.concatenate(items)
    z = prefs.offset + prefs.user_bias[u] + prefs.item_bias[i]
    z += np.einsum("ij,ij->i", prefs.user_factors[u], prefs.item_factors[i])
    genre_rows = prefs.genres[i]
    valid = genre_rows >= 0
    taste = np.where(valid, prefs.affinity[u[:, None], np.maximum(genre_rows, 0)], 0.0).sum(axis=1)
    z += taste / valid.sum(axis=1)
    mu = prefs.low + (prefs.high - prefs.low) * expit(z)
    return np.clip(np.round(mu + 0.7 * rng.standard_normal(len(mu))), 1, 5)


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="only the ML-100k size")
    args = parser.parse_args()
    names = ["ml-100k"] if args.quick else list(SIZES)

    t = time.perf_counter()
    generate(50, 40, 500, reratings=2, familiar_fraction=0.1)  # compile / load the numba kernels
    print(f"first call (numba compile or cache load): {time.perf_counter() - t:.2f} s")
    for name in names:
        n_users, n_items, n_ratings = SIZES[name]
        t = time.perf_counter()
        data = generate(n_users, n_items, n_ratings, seed=0)
        ours = time.perf_counter() - t
        assert data.n_ratings == n_ratings
        line = f"{name:8s} {n_ratings:>11,} ratings  receval {ours:7.2f} s  peak RSS so far {peak_gb():.2f} GB"
        if n_ratings <= ANCHOR_UP_TO:
            t = time.perf_counter()
            naive(n_users, n_items, n_ratings)
            anchor = time.perf_counter() - t
            line += f"  naive numpy {anchor:7.2f} s  speed-up {anchor / ours:5.1f}x"
        print(line, flush=True)
        del data


if __name__ == "__main__":
    main()
