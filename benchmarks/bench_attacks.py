"""Time to inject a shilling attack into a MovieLens-1M-sized generated set (issue 10: under 2 s for 10%).

Anchor: the straightforward way — one fake profile at a time with ``Generator.choice``
for the filler items and per-item means looked up through a pandas ``groupby``, rows
collected in a DataFrame and the whole set rebuilt with ``Interactions.from_frame``.
Ours: :func:`receval.studies.attacks.inject` (one vectorised draw for all profiles,
rows appended to the existing index arrays).

    .venv/bin/python benchmarks/bench_attacks.py --quick   # ML-100k size
    .venv/bin/python benchmarks/bench_attacks.py           # ML-1M size (6,040 x 3,700, 1M ratings)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from receval import Interactions
from receval.data.synthetic import generate
from receval.studies.attacks import ATTACKS, inject

SIZES = {"ml-100k": (943, 1682, 100_000), "ml-1m": (6040, 3700, 1_000_000)}


def naive_average_attack(data: Interactions, target, size: float, filler: float, seed: int = 0) -> Interactions:
    """An average push attack, one profile at a time."""
    rng = np.random.default_rng(seed)
    frame = data.to_frame()
    stats = frame.groupby("item")["rating"].agg(["mean", "std"])
    mu, sigma = frame["rating"].mean(), frame["rating"].std()
    means = stats["mean"].to_dict()
    stds = stats["std"].fillna(sigma).to_dict()
    n_fake = round(size * frame["user"].nunique())
    n_filler = round(filler * data.n_items)
    candidates = np.array([i for i in data.item_ids if i != target])
    users, items, ratings = [], [], []
    for j in range(n_fake):
        user = f"__attack_{j}"
        chosen = rng.choice(candidates, size=n_filler, replace=False)
        values = [rng.normal(means.get(i, mu), stds.get(i, sigma)) for i in chosen]
        users += [user] * (n_filler + 1)
        items += [target, *chosen.tolist()]
        ratings += [data.scale.high, *np.clip(np.round(values), data.scale.low, data.scale.high).tolist()]
    fake = pd.DataFrame({"user": users, "item": items, "rating": ratings})
    both = pd.concat([frame[["user", "item", "rating"]].astype({"user": object}), fake], ignore_index=True)
    return Interactions.from_frame(both, scale=data.scale)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="ML-100k size only")
    parser.add_argument("--size", type=float, default=0.1, help="attack size (fraction of users)")
    parser.add_argument("--filler", type=float, default=0.05, help="filler size (fraction of items)")
    args = parser.parse_args()
    label = "ml-100k" if args.quick else "ml-1m"
    n_users, n_items, n_ratings = SIZES[label]
    start = time.perf_counter()
    data = generate(n_users, n_items, n_ratings, seed=0)
    print(f"{label}: generated {data} in {time.perf_counter() - start:.2f} s")
    target = data.item_ids[n_items // 2]
    inject(data, "average", [target], size=args.size, filler=args.filler, seed=0)  # warm-up
    for kind in ATTACKS:
        start, cpu = time.perf_counter(), time.process_time()
        result = inject(data, kind, [target], size=args.size, filler=args.filler, seed=1)
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(
            f"{kind:<10} {args.size:.0%} attack: {len(result.fake_users)} profiles, "
            f"{result.data.n_ratings - data.n_ratings} rows in {elapsed:.3f} s wall, {cpu:.3f} s CPU"
        )
    start = time.perf_counter()
    ours = inject(data, "average", [target], size=args.size, filler=args.filler, seed=1)
    t_ours = time.perf_counter() - start
    start = time.perf_counter()
    anchor = naive_average_attack(data, target, args.size, args.filler, seed=1)
    t_anchor = time.perf_counter() - start
    assert anchor.n_ratings == ours.data.n_ratings
    print(
        f"average attack: ours {t_ours:.3f} s, anchor (per-profile loop) {t_anchor:.2f} s, "
        f"ratio {t_anchor / t_ours:.0f}x"
    )


if __name__ == "__main__":
    main()
