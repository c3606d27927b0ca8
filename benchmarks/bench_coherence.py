"""Benchmark: the seven user-coherence functions on a MovieLens-25M-sized generated set.

Target (issue 7): all seven functions for 162,000 users, 60,000 items, 25M ratings and
20 genres in under 30 s. Anchor: a naive per-user pandas ``groupby`` implementation of
the same definitions, timed on a subset of users together with ours on that subset;
the ratio is printed and the naive time is extrapolated to the full set by ratings.

    .venv/bin/python benchmarks/bench_coherence.py            # full size
    .venv/bin/python benchmarks/bench_coherence.py --quick    # 1/100 of it, seconds
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd
import scipy.sparse as sp

from receval.data.interactions import Interactions, RatingScale
from receval.stats.coherence import GAMMAS, coherence, coherence_all


def make_data(n_users: int, n_items: int, n_ratings: int, n_genres: int, seed: int = 0) -> Interactions:
    """Unique (user, item) pairs with log-normal user activity and power-law item popularity."""
    rng = np.random.default_rng(seed)
    activity = rng.lognormal(0, 1, n_users)
    item_p = (np.arange(n_items) + 1.0 + 0.06 * n_items) ** -1.2
    item_p /= item_p.sum()
    item_cdf = np.cumsum(item_p)
    keys = np.empty(0, dtype=np.int64)
    while len(keys) < n_ratings:
        draw = int((n_ratings - len(keys)) * 1.2) + 1000
        u = np.repeat(np.arange(n_users, dtype=np.int64), rng.multinomial(draw, activity / activity.sum()))
        i = np.minimum(np.searchsorted(item_cdf, rng.random(len(u))), n_items - 1)
        keys = np.unique(np.concatenate([keys, u * n_items + i]))
    keys = rng.choice(keys, size=n_ratings, replace=False)
    users, items = np.divmod(keys, n_items)
    ratings = rng.integers(1, 11, size=n_ratings) / 2  # 0.5 .. 5 in steps of 0.5, as ML-25M
    n_g = rng.choice([1, 2, 3], size=n_items, p=[0.5, 0.33, 0.17])
    rows = np.repeat(np.arange(n_items), n_g)
    cols = np.concatenate([rng.choice(n_genres, size=k, replace=False) for k in n_g])
    aspects = sp.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n_items, n_genres))
    return Interactions(
        users=users,
        items=items,
        ratings=ratings,
        user_ids=np.arange(n_users),
        item_ids=np.arange(n_items),
        scale=RatingScale(0.5, 5, 0.5),
        aspects=aspects,
        aspect_names=np.array([f"g{j}" for j in range(n_genres)], dtype=object),
    )


def naive_all(data: Interactions) -> dict[str, dict[int, float]]:
    """The seven functions by a per-user pandas groupby loop, straight from the definitions."""
    frame = data.to_frame(original_ids=False)
    a = data.aspects.tocoo()
    long = frame.merge(pd.DataFrame({"item": a.row, "aspect": a.col}), on="item")
    long["rating"] = long["rating"].astype(float)
    community = long.groupby("aspect")["rating"].sum()
    community = community / community.sum()
    out: dict[str, dict[int, float]] = {g: {} for g in GAMMAS}
    for user, rows in long.groupby("user"):
        n_items = rows["item"].nunique()
        total = rows["rating"].sum()
        acc = dict.fromkeys(GAMMAS, 0.0)
        for aspect, ua in rows.groupby("aspect"):
            r = ua["rating"].to_numpy()
            sd = float(np.std(r, ddof=1)) if len(r) > 1 else 0.0
            p = r.sum() / total
            w = len(r) / n_items
            acc["entropy"] += p * math.log(p) if p > 0 else 0.0
            acc["kld"] += p * math.log(p / community[aspect]) if p > 0 else 0.0
            acc["mean"] += r.mean()
            acc["wmean"] += r.mean() * w
            acc["std"] += sd
            acc["wstd"] += sd * w
            acc["size"] += len(r)
        for g in GAMMAS:
            out[g][int(user)] = -acc[g]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1/100 of the full size")
    parser.add_argument("--subset-users", type=int, default=2000, help="users in the naive-anchor subset")
    args = parser.parse_args()
    div = 100 if args.quick else 1
    n_users, n_items, n_ratings = 162_000 // div, 60_000 // div, 25_000_000 // div
    t = time.perf_counter()
    data = make_data(n_users, n_items, n_ratings, 20)
    print(f"generated {data} with 20 genres in {time.perf_counter() - t:.1f} s")

    coherence(make_data(20, 30, 100, 3), "wstd")  # compile the numba kernel outside the timings
    # anchor and ours on the same subset of users (CPU time: the machine may be shared)
    sub_users = np.arange(min(args.subset_users, n_users))
    sub = data.subset(np.isin(data.users, sub_users))
    t = time.process_time()
    ref = naive_all(sub)
    t_naive = time.process_time() - t
    t = time.process_time()
    ours_sub = coherence_all(sub)
    t_ours_sub = time.process_time() - t
    worst = max(abs(ours_sub[g].values[u] - v) / max(1.0, abs(v)) for g in GAMMAS for u, v in ref[g].items())
    print(
        f"subset {len(sub_users)} users / {sub.n_ratings} ratings (CPU): naive groupby {t_naive:.2f} s, "
        f"ours {t_ours_sub:.3f} s, ratio {t_naive / t_ours_sub:.0f}x, max relative difference {worst:.1e}"
    )

    t, c = time.perf_counter(), time.process_time()
    coherence_all(data)
    t_shared, c_shared = time.perf_counter() - t, time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    for g in GAMMAS:
        coherence(data, g)
    t_each, c_each = time.perf_counter() - t, time.process_time() - c
    naive_full = t_naive * data.n_ratings / max(sub.n_ratings, 1)
    print(
        f"full set: seven functions sharing one pass {t_shared:.2f} s (CPU {c_shared:.2f} s); "
        f"seven separate calls {t_each:.2f} s (CPU {c_each:.2f} s)"
    )
    print(
        f"naive groupby extrapolated to the full set (CPU): {naive_full:.0f} s "
        f"(ratio {naive_full / c_each:.0f}x against the separate calls' CPU time); target < 30 s for all seven: "
        f"separate calls {'met' if t_each < 30 else 'MISSED'} (wall), "
        f"one shared pass {'met' if t_shared < 30 else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
