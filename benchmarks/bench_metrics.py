"""Benchmark: one-shot evaluation of top-100 lists, receval vs ranx vs pytrec_eval.

Workload (issue 3): users × top-100 lists over a catalogue, ~32 rated items per user
with grades 1-5, metrics P@10, R@10, nDCG@10, MAP@100, MRR, starting from pandas
DataFrames (integer ids). Reports, for each size:

- end to end (DataFrames in, summary out): receval; ranx (id cast to str + Qrels/Run
  construction + evaluate; cold = first call in this process with an empty numba
  cache, warm = second call); pytrec_eval (dict building + evaluate);
- metric computation alone (rankings matrix + truth CSR in, summary out): receval
  vs a plain dense-numpy reference written below;
- receval's first call in a fresh subprocess (import + first evaluate on small data);
- peak memory of receval.evaluate (tracemalloc) against the input DataFrames' size.

Every tool's means are checked against ours (|Δ| < 1e-9) before timing is reported.

Run:  python benchmarks/bench_metrics.py            (100,000 and 6,040 users)
      python benchmarks/bench_metrics.py --quick    (2,000 users, a smoke run)
      add --skip-oracles to time receval alone
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc

os.environ.setdefault("NUMBA_CACHE_DIR", tempfile.mkdtemp(prefix="bench-numba-"))  # ranx starts cold

import numpy as np
import pandas as pd
import scipy.sparse as sp

import receval
from receval.metrics.registry import MetricInput, parse_metric

OURS = ["precision@10", "recall@10", "ndcg@10", "map@100", "mrr"]
RANX = ["precision@10", "recall@10", "ndcg@10", "map@100", "mrr"]
TREC = ["P_10", "recall_10", "ndcg_cut_10", "map_cut_100", "recip_rank"]
LIST, RATED = 100, 32


def make_data(n_users: int, n_items: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Truth (~32 graded items per user) and top-100 scored lists drawn from its items and random ones."""
    rng = np.random.default_rng(seed)
    # truth: 40 draws per user, duplicates dropped, at most 32 kept
    draws = np.sort(rng.integers(0, n_items, (n_users, 40)), axis=1)
    fresh = np.ones_like(draws, dtype=bool)
    fresh[:, 1:] = draws[:, 1:] != draws[:, :-1]
    keep = fresh & (np.cumsum(fresh, axis=1) <= RATED)
    users = np.repeat(np.arange(n_users), keep.sum(axis=1))
    truth = pd.DataFrame({"user": users, "item": draws[keep], "rating": rng.integers(1, 6, keep.sum())})
    # lists: candidates = the user's truth items + 130 random ones, shuffled, duplicates dropped, first 100
    cand = np.concatenate([np.where(keep, draws, -1)[:, :RATED], rng.integers(0, n_items, (n_users, 130))], axis=1)
    priority = rng.random(cand.shape)
    priority[cand < 0] = np.inf
    by_item = np.argsort(cand, axis=1, kind="stable")
    sorted_items = np.take_along_axis(cand, by_item, axis=1)
    dup = np.zeros_like(cand, dtype=bool)
    dup[:, 1:] = sorted_items[:, 1:] == sorted_items[:, :-1]
    np.put_along_axis(priority, by_item, np.where(dup, np.inf, np.take_along_axis(priority, by_item, axis=1)), axis=1)
    order = np.argsort(priority, axis=1)[:, :LIST]
    items = np.take_along_axis(cand, order, axis=1)
    scores = (LIST - np.arange(LIST)) + rng.random((n_users, LIST)) * 0.5
    recs = pd.DataFrame({"user": np.repeat(np.arange(n_users), LIST), "item": items.ravel(), "score": scores.ravel()})
    return truth, recs


def timed(fn, *args, **kwargs):
    """(result, wall seconds); the CPU seconds of the call go to CPU[fn.__name__] (shared machines are noisy)."""
    start, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    CPU[fn.__name__] = time.process_time() - cpu
    return out, time.perf_counter() - start


CPU: dict[str, float] = {}


def ours_end_to_end(truth: pd.DataFrame, recs: pd.DataFrame) -> dict[str, float]:
    return receval.evaluate(recs, truth, OURS).summary


def ranx_end_to_end(truth: pd.DataFrame, recs: pd.DataFrame) -> dict[str, float]:
    import ranx

    q = truth.astype({"user": str, "item": str}).astype({"user": object, "item": object})
    r = recs.astype({"user": str, "item": str}).astype({"user": object, "item": object})
    qrels = ranx.Qrels.from_df(q, q_id_col="user", doc_id_col="item", score_col="rating")
    run = ranx.Run.from_df(r, q_id_col="user", doc_id_col="item", score_col="score")
    scores = ranx.evaluate(qrels, run, RANX)
    return {ours: float(scores[theirs]) for ours, theirs in zip(OURS, RANX, strict=True)}


def trec_end_to_end(truth: pd.DataFrame, recs: pd.DataFrame) -> dict[str, float]:
    import pytrec_eval

    qrel: dict[str, dict[str, int]] = {}
    for u, i, r in zip(truth["user"].astype(str), truth["item"].astype(str), truth["rating"].tolist(), strict=True):
        qrel.setdefault(u, {})[i] = r
    run: dict[str, dict[str, float]] = {}
    for u, i, s in zip(recs["user"].astype(str), recs["item"].astype(str), recs["score"].tolist(), strict=True):
        run.setdefault(u, {})[i] = s
    res = pytrec_eval.RelevanceEvaluator(qrel, set(TREC)).evaluate(run)
    return {ours: float(np.mean([v[t] for v in res.values()])) for ours, t in zip(OURS, TREC, strict=True)}


def kernel_inputs(truth: pd.DataFrame, recs: pd.DataFrame, n_items: int) -> tuple[np.ndarray, sp.csr_matrix]:
    """The kernels' form (rankings matrix, truth CSR); input already grouped and sorted."""
    n_users = int(truth["user"].max()) + 1
    t = sp.csr_matrix(
        (truth["rating"].to_numpy(np.float32), (truth["user"].to_numpy(), truth["item"].to_numpy())),
        shape=(n_users, n_items),
    )
    t.sort_indices()
    return recs["item"].to_numpy(np.int32).reshape(n_users, LIST), t


def ours_kernels(rankings: np.ndarray, truth: sp.csr_matrix) -> dict[str, float]:
    data = MetricInput(rankings, truth)
    return {m: parse_metric(m).compute(data) for m in OURS}


def dense_reference(rankings: np.ndarray, truth: sp.csr_matrix, chunk: int = 256) -> dict[str, float]:
    """Plain numpy: dense truth rows per chunk + take_along_axis for the grades, the user's
    grades padded into a dense (users x max rated) block and sorted for the ideal DCG."""
    n_users = rankings.shape[0]
    counts = np.diff(truth.indptr)
    padded = np.zeros((n_users, int(counts.max())))
    padded[np.repeat(np.arange(n_users), counts), np.arange(truth.nnz) - np.repeat(truth.indptr[:-1], counts)] = (
        truth.data
    )
    ideal_all = -np.sort(-padded, axis=1)[:, :10]
    sums = dict.fromkeys(OURS, 0.0)
    disc = 1.0 / np.log2(np.arange(2, LIST + 2))
    for start in range(0, n_users, chunk):
        dense = truth[start : start + chunk].toarray()
        grades = np.take_along_axis(dense, rankings[start : start + chunk], axis=1).astype(np.float64)
        rel = grades >= 1
        n_rel = counts[start : start + chunk]
        sums["precision@10"] += (rel[:, :10].sum(axis=1) / 10).sum()
        sums["recall@10"] += (rel[:, :10].sum(axis=1) / n_rel).sum()
        ideal = ideal_all[start : start + chunk]
        sums["ndcg@10"] += ((grades[:, :10] @ disc[:10]) / (ideal @ disc[: ideal.shape[1]])).sum()
        prec_at = np.cumsum(rel, axis=1) / np.arange(1, LIST + 1)
        sums["map@100"] += ((prec_at * rel).sum(axis=1) / n_rel).sum()
        first = np.where(rel.any(axis=1), 1.0 / (rel.argmax(axis=1) + 1), 0.0)
        sums["mrr"] += first.sum()
    return {m: v / n_users for m, v in sums.items()}


def check(name: str, got: dict[str, float], want: dict[str, float]) -> None:
    worst = max(abs(got[m] - want[m]) for m in OURS)
    if worst > 1e-9:
        raise SystemExit(f"{name} disagrees with receval by {worst:g}: {got} vs {want}")


def warmup_subprocess() -> tuple[float, float, float]:
    code = (
        "import time; t0 = time.perf_counter(); import receval, pandas as pd; t1 = time.perf_counter();"
        "tr = pd.DataFrame({'user': [1, 1, 2], 'item': [1, 2, 1], 'rating': [5, 3, 4]});"
        "rc = pd.DataFrame({'user': [1, 1, 2], 'item': [2, 1, 1], 'score': [2.0, 1.0, 1.0]});"
        f"m = {OURS!r}; t2 = time.perf_counter(); receval.evaluate(rc, tr, m); t3 = time.perf_counter();"
        "receval.evaluate(rc, tr, m); t4 = time.perf_counter();"
        "print(t1 - t0, t3 - t2, t4 - t3)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return tuple(float(x) for x in out.split())  # type: ignore[return-value]


def peak_memory(truth: pd.DataFrame, recs: pd.DataFrame) -> tuple[float, float]:
    size = (truth.memory_usage(deep=True).sum() + recs.memory_usage(deep=True).sum()) / 2**20
    tracemalloc.start()
    receval.evaluate(recs, truth, OURS)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 2**20, size


def run_size(n_users: int, n_items: int, oracles: bool) -> None:
    truth, recs = make_data(n_users, n_items)
    print(f"\n## {n_users:,} users x top-{LIST} over {n_items:,} items; {len(truth):,} truth rows, {len(recs):,} recs")
    ours, t_first = timed(ours_end_to_end, truth, recs)
    t_ours = timed(ours_end_to_end, truth, recs)[1]  # second call: what a user sees in a session
    c_ours = CPU["ours_end_to_end"]
    print(f"receval end to end           {t_ours:8.3f} s   (CPU {c_ours:.3f} s; first call here {t_first:.3f} s)")
    print("  summary:", {k: round(v, 6) for k, v in ours.items()})
    rankings, csr = kernel_inputs(truth, recs, n_items)
    kern, _ = timed(ours_kernels, rankings, csr)
    t_kern = timed(ours_kernels, rankings, csr)[1]
    ref, _ = timed(dense_reference, rankings, csr)
    t_ref = timed(dense_reference, rankings, csr)[1]
    check("kernels", kern, ours)
    check("dense reference", ref, ours)
    c_kern, c_ref = CPU["ours_kernels"], CPU["dense_reference"]
    print(f"receval metrics alone        {t_kern:8.3f} s   (CPU {c_kern:.3f} s)")
    print(
        f"dense numpy reference        {t_ref:8.3f} s   (CPU {c_ref:.3f} s) -> receval / reference = "
        f"{t_kern / t_ref:.2f}x wall, {c_kern / c_ref:.2f}x CPU"
    )
    peak, size = peak_memory(truth, recs)
    print(f"peak memory of evaluate()    {peak:8.1f} MiB vs input DataFrames {size:.1f} MiB -> {peak / size:.2f}x")
    if not oracles:
        return
    for call in range(2):
        label = "warm" if call or "ranx_end_to_end" in CPU else "cold"  # ranx JITs once per process
        got, t_ranx = timed(ranx_end_to_end, truth, recs)
        check("ranx", got, ours)
        c_ranx = CPU["ranx_end_to_end"]
        print(
            f"ranx end to end, {label}        {t_ranx:8.3f} s   (CPU {c_ranx:.3f} s) -> receval is "
            f"{t_ranx / t_ours:.1f}x faster (wall), {c_ranx / c_ours:.1f}x (CPU)"
        )
    got, t_trec = timed(trec_end_to_end, truth, recs)
    check("pytrec_eval", got, ours)
    c_trec = CPU["trec_end_to_end"]
    print(
        f"pytrec_eval end to end       {t_trec:8.3f} s   (CPU {c_trec:.3f} s) -> receval is "
        f"{t_trec / t_ours:.1f}x faster (wall), {c_trec / c_ours:.1f}x (CPU)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="2,000 users only (smoke run)")
    parser.add_argument("--skip-oracles", action="store_true", help="time receval only")
    parser.add_argument("--users", type=int, help="one custom size: number of users")
    parser.add_argument("--items", type=int, default=20_000, help="catalogue size with --users")
    args = parser.parse_args()
    imp, first, second = warmup_subprocess()
    print(f"fresh process: import receval {imp:.3f} s, first evaluate {first:.3f} s, second {second:.3f} s")
    sizes = [(2_000, 1_000)] if args.quick else [(6_040, 3_900), (100_000, 20_000)]
    if args.users:
        sizes = [(args.users, args.items)]
    for n_users, n_items in sizes:
        run_size(n_users, n_items, not args.skip_oracles)


if __name__ == "__main__":
    main()
