"""Whole-process evaluation from files: ``receval evaluate`` against ranx, 30,000 users × top-100 from TSV.

Generates (seeded) a truth TSV (``user, item, rating``: 30,000 users, 2–40 graded
ratings each) and a run TSV (``user, item, score``: the top 100 of each user, sorted),
then times, as whole processes (interpreter start-up and imports included):

* ``receval evaluate --truth t.tsv --recs r.tsv --metrics <5 metrics> --json``;
* the anchor: a ranx script that reads both files with pandas, builds
  ``Qrels.from_df`` / ``Run.from_df`` and calls ``ranx.evaluate`` on the same five
  metrics (its numba kernels are compiled once in a warm-up run, not timed);
* with ``--trec``: the same run and truth as TREC files, read by ranx's ``from_file``.

Each is run ``--repeat`` times (alternating) and the best time kept; the ratio
ranx / receval is printed (the target is ≥ 10). The two tools' means are printed
too: they must agree. Measure on a quiet machine: the script prints the load
average and refuses to time when it is 3 or more (``--force`` times anyway).

Usage::

    python benchmarks/bench_evaluate_io.py             # 30,000 users x top-100
    python benchmarks/bench_evaluate_io.py --users 2000 --force   # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

METRICS = {"ndcg@10": "ndcg@10", "precision@10": "precision@10", "recall@100": "recall@100",
           "map@100": "map@100", "mrr": "mrr"}  # fmt: skip
"""receval metric -> ranx metric (same conventions: relevance ≥ 1, linear gains)."""

RANX_SCRIPT = """
import json, sys
import pandas as pd
from ranx import Qrels, Run, evaluate
truth = pd.read_csv(sys.argv[1], sep="\\t", dtype={"user": str, "item": str})
run = pd.read_csv(sys.argv[2], sep="\\t", dtype={"user": str, "item": str})
qrels = Qrels.from_df(truth.astype({"user": object, "item": object}), q_id_col="user", doc_id_col="item",
                      score_col="rating")
run = Run.from_df(run.astype({"user": object, "item": object}), q_id_col="user", doc_id_col="item",
                  score_col="score")
print(json.dumps(evaluate(qrels, run, sys.argv[3].split(","))))
"""

RANX_TREC_SCRIPT = """
import json, sys
from ranx import Qrels, Run, evaluate
print(json.dumps(evaluate(Qrels.from_file(sys.argv[1], kind="trec"), Run.from_file(sys.argv[2], kind="trec"),
                          sys.argv[3].split(","))))
"""


def generate(folder: Path, n_users: int, k: int = 100, n_items: int = 20_000, seed: int = 0) -> None:
    """Truth and run TSVs (and TREC copies) with string-free integer ids, as recommenders write them."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, n_items + 1) ** 0.8
    popularity /= popularity.sum()
    n_rated = rng.integers(2, 41, n_users)
    t_users = np.repeat(np.arange(1, n_users + 1), n_rated)
    t_items = rng.choice(n_items, size=len(t_users), p=popularity) + 1
    truth = pd.DataFrame({"user": t_users, "item": t_items, "rating": rng.integers(1, 6, len(t_users))})
    truth = truth.drop_duplicates(["user", "item"])
    r_users = np.repeat(np.arange(1, n_users + 1), k)
    r_items = np.argsort(rng.random((n_users, n_items // 20)), axis=1)[:, :k].ravel() * 20 + 1
    scores = np.sort(rng.random((n_users, k)), axis=1)[:, ::-1].ravel() + 1.0
    run = pd.DataFrame({"user": r_users, "item": r_items, "score": np.round(scores, 9)})
    truth.to_csv(folder / "truth.tsv", sep="\t", index=False)
    run.to_csv(folder / "run.tsv", sep="\t", index=False)
    with open(folder / "truth.qrels", "w") as fh:
        fh.writelines(f"{u} 0 {i} {r}\n" for u, i, r in truth.itertuples(index=False))
    with open(folder / "run.trec", "w") as fh:
        rows = zip(run.itertuples(index=False), np.tile(np.arange(1, k + 1), n_users), strict=True)
        fh.writelines(f"{u} Q0 {i} {p} {s} bench\n" for (u, i, s), p in rows)


def _timed(cmd: list[str]) -> tuple[float, dict]:
    start = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--trec", action="store_true", help="also time the TREC files (ranx from_file)")
    parser.add_argument("--force", action="store_true", help="time even when the load average is ≥ 3")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"load average (1 min): {load:.2f}")
    if load >= 3 and not args.force:
        sys.exit("the machine is busy (load ≥ 3): timings would mean nothing; rerun later or pass --force")
    receval = [str(Path(sys.executable).with_name("receval"))]
    ours_metrics, ranx_metrics = ",".join(METRICS), ",".join(METRICS.values())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        generate(folder, args.users)
        runs = {
            "receval (TSV)": [*receval, "evaluate", "--truth", str(folder / "truth.tsv"), "--recs",
                              str(folder / "run.tsv"), "--metrics", ours_metrics, "--empty-users", "zero", "--json"],
            "ranx (pandas + from_df)": [sys.executable, "-c", RANX_SCRIPT, str(folder / "truth.tsv"),
                                        str(folder / "run.tsv"), ranx_metrics],
        }  # fmt: skip
        if args.trec:
            runs["receval (TREC)"] = [*receval, "evaluate", "--truth", str(folder / "truth.qrels"), "--recs",
                                      str(folder / "run.trec"), "--metrics", ours_metrics, "--empty-users", "zero",
                                      "--json"]  # fmt: skip
            runs["ranx (from_file TREC)"] = [sys.executable, "-c", RANX_TREC_SCRIPT, str(folder / "truth.qrels"),
                                             str(folder / "run.trec"), ranx_metrics]  # fmt: skip
        for cmd in runs.values():  # warm-up: numba caches of both tools
            _timed(cmd)
        best = {name: float("inf") for name in runs}
        values = {}
        for _ in range(args.repeat):
            for name, cmd in runs.items():
                seconds, values[name] = _timed(cmd)
                best[name] = min(best[name], seconds)
    for name, seconds in best.items():
        shown = {metric: round(value, 9) for metric, value in values[name].items() if metric != "conventions"}
        print(f"{name:<26} {seconds:7.2f} s   {shown}")
    print(f"ratio ranx / receval (TSV): {best['ranx (pandas + from_df)'] / best['receval (TSV)']:.1f}x")
    if args.trec:
        print(f"ratio ranx / receval (TREC): {best['ranx (from_file TREC)'] / best['receval (TREC)']:.1f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
