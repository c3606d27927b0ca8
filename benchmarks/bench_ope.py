"""Speed of the off-policy estimators: 10 target policies on a 1M-decision log, every estimator with its interval.

Workload (generated, seeded): complete synthetic data of 1,000 users x 200 items
(:func:`receval.data.synthetic.generate_with_truth`, ``keep_complete=True``), rewards from the
complete matrix at λ = 4; the logging policy ε-greedy (ε = 0.3) logs 1,000,000 decisions with
exact propensities (:func:`receval.simulate.logged.log_policy`, timed apart); the targets are 10
policy tables (random, greedy, ε-greedy and softmax at several parameters, UCB, Thompson with
1,000 draws); the reward model is a fixed users x items table (the item means of the log).

Timed: :func:`receval.stats.ope.estimate_many` for the 10 targets (DM, IPS, SNIPS, DR, switch-DR,
DRos with ``--bootstrap`` replicates each, the resamples shared; goal under 60 s in all), and the anchor, a naive Python
loop computing the six point estimates (no interval) of one target, round by round, on the first
``--naive`` decisions; its time is scaled to the full log and 10 targets, and the values of both
are compared on that prefix. Open Bandit Pipeline is not installed here (no anchor from it).

Usage::

    python benchmarks/bench_ope.py                       # 1M decisions, 200 replicates
    python benchmarks/bench_ope.py --rounds 100000       # smoke run
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from receval.data.synthetic import generate_with_truth
from receval.simulate.logged import log_policy, policy_table
from receval.stats.ope import estimate, estimate_many

TARGETS = (
    "random", "greedy", "egreedy:0.05", "egreedy:0.1", "egreedy:0.5",
    "softmax:0.05", "softmax:0.1", "softmax:0.5", "ucb", "thompson",
)  # fmt: skip


def naive(reward, pscore, e, ql, qt, tau=10.0, lam=10.0):
    """The six point estimates, one Python loop over the rounds (the anchor)."""
    n = len(reward)
    s = {k: 0.0 for k in ("dm", "ips", "snips_num", "snips_den", "dr", "switch", "dros")}
    for j in range(n):
        w = e[j] / pscore[j]
        res = reward[j] - ql[j]
        s["dm"] += qt[j]
        s["ips"] += w * reward[j]
        s["snips_num"] += w * reward[j]
        s["snips_den"] += w
        s["dr"] += qt[j] + w * res
        s["switch"] += qt[j] + (w * res if w <= tau else 0.0)
        s["dros"] += qt[j] + lam * w / (w * w + lam) * res
    out = {k: s[k] / n for k in ("dm", "ips", "dr", "switch", "dros")}
    out["snips"] = s["snips_num"] / s["snips_den"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=1_000_000)
    parser.add_argument("--bootstrap", type=int, default=200)
    parser.add_argument("--naive", type=int, default=200_000)
    args = parser.parse_args()
    print(f"load before: {open('/proc/loadavg').read().split()[:3]}  cpus {os.cpu_count()}")
    gen = generate_with_truth(n_users=1000, n_items=200, n_ratings=20_000, seed=0, keep_complete=True)
    train, test = gen.data, gen.complete
    assert test is not None
    t0 = time.perf_counter()
    logging = policy_table("egreedy:0.3", train, test, threshold=4)
    tables = {t: policy_table(t, train, test, threshold=4, seed=1) for t in TARGETS}
    log = log_policy(logging, test, threshold=4, rounds=args.rounds, seed=0).frame
    print(f"policy tables and logging {args.rounds:,} decisions: {time.perf_counter() - t0:.2f} s")
    u, i = log["user"].to_numpy(), log["item"].to_numpy()
    r, p = log["reward"].to_numpy(np.float64), log["propensity"].to_numpy(np.float64)
    item_mean = np.bincount(i, r, 200) / np.maximum(np.bincount(i, minlength=200), 1)
    q = np.broadcast_to(item_mean, (1000, 200))
    inputs = {}
    for name, table in tables.items():
        inputs[name] = (table.probs[u, i], q[u, i], (table.probs[u] * q[u]).sum(axis=1))
    t0 = time.perf_counter()
    estimate_many(r, p, inputs, n_bootstrap=args.bootstrap, seed=0)
    fast = time.perf_counter() - t0
    print(f"receval: 10 targets x 6 estimators, {args.bootstrap} bootstrap replicates each: {fast:.2f} s (goal 60 s)")
    m = min(args.naive, args.rounds)
    e, ql, qt = inputs["softmax:0.1"]
    t0 = time.perf_counter()
    slow = naive(r[:m].tolist(), p[:m].tolist(), e[:m].tolist(), ql[:m].tolist(), qt[:m].tolist())
    loop = time.perf_counter() - t0
    point = estimate(r[:m], p[:m], e[:m], q_logged=ql[:m], q_target=qt[:m], n_bootstrap=0)
    diff = max(abs(point[k].value - slow[k]) for k in slow)
    scaled = loop * (args.rounds / m) * len(TARGETS)
    t0 = time.perf_counter()
    for e, ql, qt in inputs.values():
        estimate(r, p, e, q_logged=ql, q_target=qt, n_bootstrap=0)
    points = time.perf_counter() - t0
    print(f"naive loop, point estimates only: {loop:.2f} s for {m:,} decisions of one target -> {scaled:.1f} s "
          f"for 10 targets on the full log; receval point estimates of 10 targets: {points:.2f} s "
          f"(ratio {scaled / points:.0f}x); max |difference| {diff:.2e}")  # fmt: skip
    print(f"load after: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
