"""Benchmark: sampled evaluation (100,000 users x 100 candidates) against full evaluation of the same systems.

Workload (issue 26): generated data, 100,000 users, 20,000 items, ~30 ratings per user,
leave-one-out (one random held-out item per user); the systems Popularity and MF
(PureSVD lists), fitted once (not timed). Two measures, each the minimum of
``--repeat`` runs after a warm-up:

- **whole**: from the fitted model to nDCG@10 and Recall@10. Full (the anchor): receval's
  one-shot evaluation, :func:`receval.evaluation.evaluate_model` with ``fitted=True``
  (every test user's full score row, training items excluded, top-10, the metrics).
  Sampled: draw 100 uniform negatives per held-out item
  (:func:`receval.evaluation.candidates.draw_candidates`), score only the candidates
  (:func:`receval.recommenders.base.score_items`), rank each held-out item among its
  negatives and compute the uncorrected and the ``bv``-corrected estimates
  (:mod:`receval.stats.sampled`).
- **kernel**: the ranking and the metric once the scores exist. Full: the rank of each
  held-out item in its full row (training items masked), then the metric, batch by batch
  of users with the scoring left out of the time; sampled: the rank among the 100
  candidates' scores, then the estimates.

The printed ratio is full / sampled (how many times faster the sampled evaluation is).

Run:  python benchmarks/bench_sampled.py            (100,000 users)
      python benchmarks/bench_sampled.py --quick    (10,000 users, a smoke run)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import scipy.sparse as sp

from receval.data.interactions import Interactions
from receval.evaluation import evaluate_model
from receval.evaluation.candidates import draw_candidates
from receval.recommenders import make
from receval.recommenders.base import score_items
from receval.split import leave_one_out
from receval.stats.sampled import estimate, rank_metric, sampled_ranks

N_ITEMS, PER_USER, N_SAMPLED = 20_000, 30, 100
METRICS = (("ndcg", 10), ("recall", 10))
BATCH = 2_000  # users per batch of full score rows (2,000 x 20,000 float64: 320 MB)


def make_data(n_users: int, seed: int = 0) -> Interactions:
    """``PER_USER`` distinct items per user, drawn by a power law of popularity (seeded)."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, N_ITEMS + 1) ** 0.8
    weights /= weights.sum()
    draws = rng.choice(N_ITEMS, size=(n_users, PER_USER * 2), p=weights)
    users, items = [], []
    for u in range(n_users):
        picked = np.unique(draws[u])[:PER_USER]
        users.append(np.full(len(picked), u))
        items.append(picked)
    u = np.concatenate(users)
    i = np.concatenate(items)
    i[:N_ITEMS] = np.arange(N_ITEMS)  # every item rated at least once: the id space is the whole catalogue
    keep = np.unique(u.astype(np.int64) * N_ITEMS + i, return_index=True)[1]
    ratings = rng.integers(1, 6, len(keep)).astype(np.float32)
    return Interactions.from_arrays(u[keep], i[keep], ratings, name="bench")


def sampled_whole(model, train, test, seed: int = 0) -> dict[str, float]:
    """Draw, score the candidates, rank, estimate (uncorrected and bv)."""
    cands = draw_candidates(train, test, N_SAMPLED, seed=seed)
    items = np.concatenate([cands.items[:, None], cands.negatives], axis=1)
    return sampled_kernel(score_items(model, cands.users, items), train.n_items)


def sampled_kernel(scores: np.ndarray, n_items: int) -> dict[str, float]:
    ranks = sampled_ranks(scores[:, 0], scores[:, 1:])
    out = {}
    for name, k in METRICS:
        for correction in ("none", "bv"):
            out[f"{name}@{k}|{correction}"] = estimate(
                name, k, ranks, n_sampled=N_SAMPLED, n_items=n_items, correction=correction
            )
    return out


def full_whole(model, train, test) -> dict[str, float]:
    result = evaluate_model(model, train, test, [f"{n}@{k}" for n, k in METRICS], threshold=1, fitted=True)
    return {m: float(v) for m, v in result.summary.items()}


def full_kernel(model, train, test) -> tuple[float, dict[str, float]]:
    """Seconds spent ranking the held-out items in their full rows and computing the metrics (scoring excluded)."""
    users, items = test.users, test.items
    order = np.argsort(users, kind="stable")
    users, items = users[order], items[order]
    seen = sp.csr_matrix((np.ones(train.n_ratings, dtype=bool), (train.users, train.items)),
                         shape=(train.n_users, train.n_items))  # fmt: skip
    ranks = np.empty(len(users))
    spent = 0.0
    for lo in range(0, len(users), BATCH):
        u, i = users[lo : lo + BATCH], items[lo : lo + BATCH]
        scores = np.asarray(model.score(u), dtype=np.float64)
        start = time.perf_counter()
        positive = scores[np.arange(len(u)), i]
        mask = seen[u].toarray()
        scores[mask] = -np.inf
        scores[np.arange(len(u)), i] = -np.inf
        ranks[lo : lo + BATCH] = 1 + (scores >= positive[:, None]).sum(axis=1)
        spent += time.perf_counter() - start
    start = time.perf_counter()
    values = {f"{n}@{k}": float(rank_metric(n, k, ranks, train.n_items).mean()) for n, k in METRICS}
    return spent + time.perf_counter() - start, values


def best_of(repeat: int, fn, *args):
    fn(*args)  # warm-up: numba, caches
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn(*args)
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n_users = 10_000 if args.quick else 100_000
    data = make_data(n_users)
    train, test = leave_one_out(data, "random", seed=0)
    print(
        f"{n_users:,} users x {N_ITEMS:,} items, {train.n_ratings:,} training ratings, {test.n_ratings:,} held out; "
        f"{N_SAMPLED} sampled negatives; minimum of {args.repeat} runs"
    )
    for name in ("popularity", "mf"):
        model = make(name, seed=0) if name == "mf" else make(name)
        model.fit(train)
        full_t, full_v = best_of(args.repeat, full_whole, model, train, test)
        samp_t, samp_v = best_of(args.repeat, sampled_whole, model, train, test)
        cands = draw_candidates(train, test, N_SAMPLED, seed=0)
        scores = score_items(model, cands.users, np.concatenate([cands.items[:, None], cands.negatives], axis=1))
        kern_s, _ = best_of(args.repeat, sampled_kernel, scores, train.n_items)
        kern_f = min(full_kernel(model, train, test)[0] for _ in range(args.repeat))
        print(f"{name:<11} whole:  full {full_t:7.2f} s  sampled {samp_t:7.2f} s  ratio {full_t / samp_t:6.1f}")
        print(f"{'':<11} kernel: full {kern_f:7.2f} s  sampled {kern_s:7.2f} s  ratio {kern_f / kern_s:6.1f}")
        print(
            f"{'':<11} ndcg@10 full {full_v['ndcg@10']:.4f}  sampled {samp_v['ndcg@10|none']:.4f}  "
            f"bv {samp_v['ndcg@10|bv']:.4f}"
        )


if __name__ == "__main__":
    main()
