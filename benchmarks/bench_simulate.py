"""Speed of the cyclic simulator (issue 5).

Measurements (500 rounds on MovieLens 100K, 943 users, one recommendation per user
and round, sequential updates, 80/20 holdout; a generated set of the same size when
../shared/data is absent):

1. random, popularity, average, ε-greedy and UCB item bandits. Target: < 5 s each.
2. Thompson sampling against an anchor: a numba loop that makes only the same number
   of ``Generator.beta`` draws (per decision, as many draws as the decision had
   available arms, with the fitted arms' parameters), nothing else. Target: within
   1.2x. Both draw from a seeded ``numpy.random.Generator`` inside numba. Our Thompson
   sampling is exact but draws in full only the arms that can win (one uniform places
   the others below a threshold), so it can cost less than the draws themselves.
3. kNN bandit (k = 10) and user-kNN / item-kNN / HKV refitted every 10 rounds.
   Target: < 60 s each.
4. ε-greedy against a CycloRec-style loop (Python loop over users, per-recommendation
   numpy/pandas bookkeeping), run for a few rounds and extrapolated per decision.
   Target: at least 50x faster.
5. A MovieLens-1M-sized generated set (6,040 users x 3,700 items, 1M ratings), 500
   rounds of the ε-greedy item bandit. Target: < 60 s.

numba compilation is cached on disk and excluded (a one-round warm-up run first).
Wall and CPU time of this process are both printed: on a shared, loaded machine wall
time inflates; CPU time shows the work done.

Usage::

    python benchmarks/bench_simulate.py           # full size
    python benchmarks/bench_simulate.py --quick   # smoke run (50 rounds, small sets)
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import pandas as pd
from numba import njit

from receval.data.synthetic import generate
from receval.recommenders.bandits import make_online
from receval.simulate import simulate
from receval.split import holdout

ML100K = Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"


def _timed(fn):
    cpu = time.process_time()
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start, time.process_time() - cpu


def _line(label: str, wall: float, cpu: float, target: str = "") -> None:
    print(f"  {label:<34} wall {wall:8.2f} s   cpu {cpu:8.2f} s   {target}")


def _ml100k(quick: bool):
    if ML100K.exists() and not quick:
        from receval.data import load

        data = load(ML100K, "movielens-100k")
    else:
        data = generate(943, 1682, 100_000, seed=0) if not quick else generate(200, 400, 12_000, seed=0)
    return holdout(data, 0.2, seed=0)


def _draw_count(train, log: pd.DataFrame) -> int:
    """Beta draws Thompson sampling made: Σ over decisions of the user's available arms."""
    n_items = train.n_items
    start = n_items - np.bincount(np.unique(train.users.astype(np.int64) * n_items + train.items) // n_items,
                                  minlength=train.n_users)  # fmt: skip
    c = np.bincount(log["user"], minlength=train.n_users).astype(np.int64)
    return int((c * start - c * (c - 1) // 2).sum())


@njit(cache=True)
def _beta_draws(rng, arms, a, b):
    """``arms[d]`` Beta draws for decision d (arm j has parameters a[j], b[j]); their sum."""
    acc = 0.0
    for n in arms:
        for j in range(n):
            acc += rng.beta(a[j], b[j])
    return acc


def _arm_counts(train, log: pd.DataFrame) -> np.ndarray:
    """Available arms of each decision of the log (a user's shrink by one per decision)."""
    n_items = train.n_items
    start = n_items - np.bincount(np.unique(train.users.astype(np.int64) * n_items + train.items) // n_items,
                                  minlength=train.n_users)  # fmt: skip
    users = log["user"].to_numpy().astype(np.int64)
    seen = np.zeros(train.n_users, np.int64)
    arms = np.empty(len(users), np.int64)
    for d, u in enumerate(users):
        arms[d] = start[u] - seen[u]
        seen[u] += 1
    return arms


def _cyclorec_style(train, test, threshold: float, rounds: int, epsilon: float = 0.1, seed: int = 0) -> int:
    """A CycloRec-like ε-greedy loop: Python over users, numpy/pandas bookkeeping per recommendation."""
    rng = np.random.default_rng(seed)
    n_items = train.n_items
    tr = train.to_frame(original_ids=False)
    te = test.to_frame(original_ids=False).set_index(["user", "item"])["rating"]
    pos = (tr["rating"] >= threshold).astype(float)
    alpha = np.ones(n_items) + np.bincount(tr["item"], weights=pos, minlength=n_items)
    beta = np.ones(n_items) + np.bincount(tr["item"], weights=1 - pos, minlength=n_items)
    seen = {u: set(g.tolist()) for u, g in tr.groupby("user")["item"]}
    records = []
    decisions = 0
    for t in range(rounds):
        for u in rng.permutation(train.n_users):
            known = seen.setdefault(u, set())
            available = np.setdiff1d(np.arange(n_items), np.fromiter(known, int, len(known)))
            if len(available) == 0:
                continue
            if rng.random() < epsilon:
                item = int(rng.choice(available))
            else:
                mu = alpha[available] / (alpha[available] + beta[available])
                item = int(available[np.argmax(mu)])
            rating = te.get((u, item))
            reward = 0.0 if rating is None or rating < threshold else 1.0
            alpha[item] += reward
            beta[item] += 1 - reward
            known.add(item)
            records.append({"round": t, "user": u, "item": item, "reward": reward, "known": rating is not None})
            decisions += 1
        pd.DataFrame(records).groupby("round")["reward"].sum().cumsum()  # per-round metrics
    return decisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes and 50 rounds (smoke run)")
    parser.add_argument("--skip-anchor", action="store_true", help="skip the Beta-draws anchor (slow at full size)")
    parser.add_argument("--only", default="1,2,3,4,5", help="comma-separated sections to run (default all)")
    args = parser.parse_args()
    only = {int(x) for x in args.only.split(",")}
    rounds = 50 if args.quick else 500
    train, test = _ml100k(args.quick)
    print(
        f"data: {train.n_users} users x {train.n_items} items, {len(train)} train / {len(test)} test; {rounds} rounds"
    )
    run = {"rounds": rounds, "threshold": 4, "seed": 0}

    if 1 in only:
        print("1. non-personalised (target < 5 s each)")
    for name in ("random", "popularity", "average", "item-bandit-egreedy", "item-bandit-ucb"):
        if 1 not in only and not (4 in only and name == "item-bandit-egreedy"):
            continue
        simulate(name, train, test, rounds=1, threshold=4)
        traj, wall, cpu = _timed(lambda n=name: simulate(n, train, test, **run))
        _line(name, wall, cpu, f"recall {traj.final()['recall']:.3f}")
        if name == "item-bandit-egreedy":
            egreedy_cpu, egreedy_decisions = cpu, traj.table["n_recommendations"].iloc[-1]

    if 2 in only:
        _thompson(train, test, run, args.skip_anchor)
    if 3 in only:
        _personalised(train, test, run)
    if 4 in only:
        _cyclorec(train, test, egreedy_cpu, egreedy_decisions, args.quick)
    if 5 in only:
        _large(run, args.quick)


def _thompson(train, test, run, skip_anchor: bool) -> None:
    print("2. Thompson sampling vs a numba loop of only its Generator.beta draws (target within 1.2x)")
    simulate("item-bandit-ts", train, test, rounds=1, threshold=4)
    traj, wall, cpu = _timed(lambda: simulate("item-bandit-ts", train, test, record_log=True, **run))
    draws = _draw_count(train, traj.log)
    _line("item-bandit-ts (ours)", wall, cpu, f"{draws:,} available arms, {1e9 * cpu / draws:.1f} ns/arm (cpu)")
    if not skip_anchor:
        model = make_online("item-bandit-ts").set_params(threshold=4).fit(train)
        arms = _arm_counts(train, traj.log)
        assert arms.sum() == draws
        _beta_draws(np.random.default_rng(0), arms[:1], model.a_, model.b_)  # compile
        _, awall, acpu = _timed(lambda: _beta_draws(np.random.default_rng(0), arms, model.a_, model.b_))
        ratio = f"ours/anchor {wall / awall:.2f}x wall, {cpu / acpu:.2f}x cpu"
        _line("Generator.beta draws only (numba)", awall, acpu, ratio)


def _personalised(train, test, run) -> None:
    print("3. personalised (target < 60 s each)")
    simulate("knn-bandit", train, test, rounds=1, threshold=4)
    traj, wall, cpu = _timed(lambda: simulate("knn-bandit", train, test, **run))
    _line("knn-bandit (k=10)", wall, cpu, f"recall {traj.final()['recall']:.3f}")
    for name in ("user-knn", "item-knn", "hkv"):
        traj, wall, cpu = _timed(lambda n=name: simulate(n, train, test, refit_every=10, **run))
        _line(f"{name} (refit every 10 rounds)", wall, cpu, f"recall {traj.final()['recall']:.3f}")


def _cyclorec(train, test, egreedy_cpu: float, egreedy_decisions: float, quick: bool) -> None:
    print("4. epsilon-greedy vs a CycloRec-style Python loop (target >= 50x)")
    anchor_rounds = 2 if quick else 5
    decisions, awall, acpu = _timed(lambda: _cyclorec_style(train, test, 4, anchor_rounds))
    per_ours = egreedy_cpu / egreedy_decisions
    per_anchor = acpu / decisions
    _line(f"CycloRec-style, {anchor_rounds} rounds", awall, acpu, f"{1e6 * per_anchor:.1f} us/decision (cpu)")
    print(f"  ours {1e6 * per_ours:.2f} us/decision (cpu): {per_anchor / per_ours:.0f}x faster")


def _large(run, quick: bool) -> None:
    print("5. MovieLens-1M-sized generated set, epsilon-greedy (target < 60 s)")
    big = generate(6040, 3700, 1_000_000, seed=1) if not quick else generate(1000, 800, 80_000, seed=1)
    btrain, btest = holdout(big, 0.2, seed=0)
    simulate("item-bandit-egreedy", btrain, btest, rounds=1, threshold=4)
    traj, wall, cpu = _timed(lambda: simulate("item-bandit-egreedy", btrain, btest, **run))
    _line(f"{big.n_users} x {big.n_items}", wall, cpu, f"recall {traj.final()['recall']:.3f}")


if __name__ == "__main__":
    main()
