"""Speed of the randomised Tukey HSD (Carterette, TOIS 2012): 10,000 permutations over 12 systems x 100k users.

Workload (generated, seeded): a users x systems matrix of nDCG-like values in [0, 1] (a user
effect plus a small system effect), 12 systems, 100,000 users.

* Check first: :func:`receval.stats.multiple.tukey_ranges_numpy` (the naive numpy loop: one
  vectorised shuffle per permutation) and the compiled kernel give the same ranges, hence the
  same p-values, for the same seed on a 2,000-user slice with 200 permutations.
* The anchor: the numpy loop timed on a few permutations over all users, extrapolated to 10,000.
* receval: :func:`receval.stats.multiple.tukey_hsd` with 10,000 permutations, after a warm-up
  call that compiles (or loads) the kernel. Goal: at most 10 s on 2 cores.
* Up to 14 systems the kernel reads each permutation from tables; the Fisher-Yates kernel that
  serves more systems is timed on the same matrix for the ratio.

The load average is printed before and after, and each timing's CPU time (all threads): the
machine is shared, and on a loaded machine the CPU time is the steadier figure.

Usage::

    NUMBA_NUM_THREADS=2 python benchmarks/bench_tukey.py
    python benchmarks/bench_tukey.py --users 10000 --permutations 1000   # smoke run
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from receval.stats.multiple import _key, _ranges_kernel, _shuffle_kernel, tukey_hsd, tukey_ranges_numpy


def _load() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--systems", type=int, default=12)
    parser.add_argument("--permutations", type=int, default=10_000)
    parser.add_argument("--anchor-permutations", type=int, default=20)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    user = rng.beta(2, 5, (args.users, 1))
    values = np.clip(user + rng.normal(0, 0.1, (args.users, args.systems)) + np.linspace(0, 0.01, args.systems), 0, 1)
    names = [f"s{i}" for i in range(args.systems)]
    print(f"load before: {_load()}")

    t = time.perf_counter()
    small = values[:2000]
    ref = tukey_ranges_numpy(small, 200, seed=7)
    got = np.asarray(_ranges_kernel(small, _key(7), 200))
    print(f"first call (compile or load the kernel) + check: {time.perf_counter() - t:.2f} s")
    assert np.allclose(got, ref, rtol=0, atol=1e-13), float(np.abs(got - ref).max())
    means = small.mean(axis=0)
    diff = np.abs(means[:, None] - means[None, :])
    same = np.array_equal(np.searchsorted(np.sort(ref), diff), np.searchsorted(np.sort(got), diff))
    print(f"numpy loop and kernel: max |range difference| {np.abs(got - ref).max():.1e}, same p-values: {same}")
    assert same

    t = time.perf_counter()
    tukey_ranges_numpy(values, args.anchor_permutations, seed=1)
    anchor = (time.perf_counter() - t) / args.anchor_permutations * args.permutations
    print(f"anchor (numpy loop), extrapolated from {args.anchor_permutations} permutations: {anchor:.1f} s")

    t, c = time.perf_counter(), time.process_time()
    result = tukey_hsd(values, names, n_resamples=args.permutations, seed=1)
    took, cpu = time.perf_counter() - t, time.process_time() - c
    significant = int((result.pvalues[np.triu_indices(args.systems, 1)] <= 0.05).sum())
    print(
        f"receval tukey_hsd: {args.systems} systems x {args.users:,} users, {args.permutations:,} permutations: "
        f"{took:.2f} s, CPU {cpu:.2f} s (goal 10 s); {anchor / took:.1f}x the anchor; {significant} of "
        f"{args.systems * (args.systems - 1) // 2} pairs significant at 0.05"
    )
    _shuffle_kernel(small, _key(7), 64)
    t, c = time.perf_counter(), time.process_time()
    _shuffle_kernel(values, _key(1), args.permutations)
    shuffle, shuffle_cpu = time.perf_counter() - t, time.process_time() - c
    print(
        f"Fisher-Yates kernel on the same matrix: {shuffle:.2f} s, CPU {shuffle_cpu:.2f} s; "
        f"tables {shuffle_cpu / cpu:.2f}x faster in CPU"
    )
    print(f"load after: {_load()}")


if __name__ == "__main__":
    main()
