"""Experiment executors: speed-up of ``--jobs 2`` over ``--jobs 1``, and Dask's per-task overhead.

1. 200 one-shot tasks on MovieLens-100K-sized generated data (943 users, 1,682 items,
   100,000 ratings): 5 algorithms x 4 parameter values x 10 seeds, run with one
   process (in-process executor) and with two local processes (joblib/loky). Both runs
   start cold (each process compiles its numba kernels once). Target: >= 1.7x.
2. Scheduling overhead per task with Dask (LocalCluster, one worker process): the
   time between the first submission and the last result, minus the tasks' own run
   time, divided by the number of tasks (it includes shipping the task and its result
   and writing the result files). Target: < 50 ms. The in-process executor's figure
   (only the result files) is printed for comparison.

Usage::

    python benchmarks/bench_experiment.py            # the full benchmark (several minutes)
    python benchmarks/bench_experiment.py --quick    # a small smoke run
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import pandas as pd

from receval.experiment import run_experiment

GRID = """\
name = "bench"
seeds = {seeds}
metrics = ["precision@10", "recall@10", "ndcg@10"]

[datasets.ml100k-like]
generate = {{ n_users = {n_users}, n_items = {n_items}, n_ratings = {n_ratings}, seed = 1 }}

[split]
method = "holdout"
test_fraction = 0.2

[protocol]
name = "one-shot"
k = 10
{recommenders}
"""

RECOMMENDERS = {
    "random": "seed = [11, 12, 13, 14]",
    "popularity": "threshold = [2, 3, 4, 5]",
    "average": "threshold = [2, 3, 4, 5]",
    "biases": "item_damping = [0.0, 5.0, 25.0, 100.0]",
    "item-knn": 'k = [10, 20, 50, 100], similarity = "cosine"',
}


def _config(folder: Path, *, quick: bool, seeds: int | None = None, recommenders: dict[str, str] | None = None) -> Path:
    recs = recommenders or (dict(list(RECOMMENDERS.items())[:2]) if quick else RECOMMENDERS)
    if quick:
        recs = {k: v.replace("[2, 3, 4, 5]", "[3, 4]").replace("[11, 12, 13, 14]", "[11, 12]") for k, v in recs.items()}
    text = GRID.format(
        seeds=seeds if seeds is not None else (2 if quick else 10),
        n_users=200 if quick else 943,
        n_items=300 if quick else 1682,
        n_ratings=8_000 if quick else 100_000,
        recommenders="\n".join(f"[recommenders.{name}]\nparams = {{ {params} }}" for name, params in recs.items()),
    )
    path = folder / f"bench-{len(list(folder.glob('*.toml')))}.toml"
    path.write_text(text)
    return path


def _timed(config: Path, out: Path, **kwargs: object) -> tuple[float, float, float, int]:
    """Wall time of the task loop (first submission to last result), total task time, whole run, tasks."""
    marks: dict[str, float] = {}

    def on_start(todo: list, skipped: int, where: str) -> None:
        marks["start"] = time.perf_counter()

    def on_result(task: object, result: object) -> None:
        marks["end"] = time.perf_counter()

    t0 = time.perf_counter()
    report = run_experiment(config, out=out, on_start=on_start, on_result=on_result, **kwargs)
    total = time.perf_counter() - t0
    if report.failed:
        raise SystemExit(f"{report.failed} tasks failed; see {out}/tasks.parquet")
    tasks = pd.read_parquet(out / "tasks.parquet")
    return marks["end"] - marks["start"], float(tasks["seconds"].sum()), total, len(tasks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small smoke run")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-experiment-"))
    print(f"cores: {os.cpu_count()}; load average before: {os.getloadavg()}")

    cfg = _config(tmp, quick=args.quick)
    loop1, busy1, total1, n = _timed(cfg, tmp / "jobs1", jobs=1)
    loop2, busy2, total2, _ = _timed(cfg, tmp / "jobs2", jobs=2)
    same = (tmp / "jobs1" / "aggregates.parquet").read_bytes() == (tmp / "jobs2" / "aggregates.parquet").read_bytes()
    print(f"{n} one-shot tasks")
    print(f"  --jobs 1: {total1:7.1f} s  (task loop {loop1:.1f} s, sum of task times {busy1:.1f} s)")
    print(f"  --jobs 2: {total2:7.1f} s  (task loop {loop2:.1f} s, sum of task times {busy2:.1f} s)")
    print(
        f"  speed-up --jobs 2 / --jobs 1: {total1 / total2:.2f}x whole run, {loop1 / loop2:.2f}x task loop (goal 1.7x)"
    )
    print(f"  identical aggregates.parquet: {same}")
    print(f"  load average after: {os.getloadavg()}")

    n_small = 20 if args.quick else 100
    small = _config(
        tmp, quick=True, seeds=n_small // 2, recommenders={"random": "seed = [1]", "popularity": "threshold = [4]"}
    )
    loop_d, busy_d, _, m = _timed(small, tmp / "dask", executor="dask", jobs=1)
    loop_l, busy_l, _, _ = _timed(small, tmp / "inproc", jobs=1)
    print(f"{m} small tasks, per-task overhead (loop time - task time) / tasks:")
    print(f"  dask LocalCluster (1 worker process): {1000 * (loop_d - busy_d) / m:6.1f} ms (target < 50 ms)")
    print(f"  in-process (result files only):       {1000 * (loop_l - busy_l) / m:6.1f} ms")


if __name__ == "__main__":
    main()
