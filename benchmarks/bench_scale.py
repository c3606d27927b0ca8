"""Scale: 1,000,000 users x top-100 (100M rows) from Parquet in user shards, as one whole process.

Writes (seeded, chunk by chunk, never all in memory) a run ``run.parquet`` (``user,
item, score``: 100 distinct items per user, sorted by user, one row group per 10,000
users) and a truth ``truth.parquet`` (``user, item, rating``: 1-20 graded items per
user, a share of them among the user's recommendations), then times

    /usr/bin/time -v receval evaluate --truth truth.parquet --recs run.parquet \\
        --metrics ndcg@10,precision@10,recall@100,map@100,mrr --shards S --jobs J --json

and prints wall seconds, CPU seconds and the peak resident memory (``Maximum resident
set size`` of ``time -v``: the largest single process among the command and its J
workers, so that all of them together hold at most J + 1 times it). Targets: under 60 s
and 10 GB on 2 cores.
The files go to a temporary folder (or ``--folder``, reused when present); nothing is
committed. ``--dask`` also runs the same evaluation on a local Dask cluster and checks
that the values are identical.

Usage::

    python benchmarks/bench_scale.py                       # 1M users, files in a temp folder
    python benchmarks/bench_scale.py --users 50000         # smoke run
    python benchmarks/bench_scale.py --folder /tmp/scale    # files kept there for the next run
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

METRICS = "ndcg@10,precision@10,recall@100,map@100,mrr"
K = 100
N_ITEMS = 100_003  # prime: (a + b*j) mod N_ITEMS, j < K, are K distinct items for any b in 1..N_ITEMS-1
CHUNK = 10_000  # users per row group
# bytecode written, as an installed package has it (PYTHONDONTWRITEBYTECODE would recompile receval every run)
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def generate(folder: Path, n_users: int, seed: int = 0) -> None:
    """Write ``run.parquet`` and ``truth.parquet`` for ``n_users`` users (chunks seeded by their index)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    run_schema = pa.schema([("user", pa.int64()), ("item", pa.int64()), ("score", pa.float64())])
    truth_schema = pa.schema([("user", pa.int64()), ("item", pa.int64()), ("rating", pa.float64())])
    with (
        pq.ParquetWriter(folder / "run.parquet", run_schema) as run_writer,
        pq.ParquetWriter(folder / "truth.parquet", truth_schema) as truth_writer,
    ):
        for start in range(0, n_users, CHUNK):
            rng = np.random.default_rng([seed, start])
            users = np.arange(start, min(start + CHUNK, n_users), dtype=np.int64)
            n = len(users)
            a = rng.integers(0, N_ITEMS, n)[:, None]
            b = rng.integers(1, N_ITEMS, n)[:, None]
            j = np.arange(K)[None, :]
            items = (a + b * j) % N_ITEMS  # the user's 100 distinct items, in rank order
            scores = np.sort(rng.random((n, K)), axis=1)[:, ::-1]
            run_writer.write_table(
                pa.table({"user": np.repeat(users, K), "item": items.ravel(), "score": scores.ravel()},
                         schema=run_schema)
            )  # fmt: skip
            n_rated = rng.integers(1, 21, n)
            rows = np.repeat(np.arange(n), n_rated)
            slot = np.arange(len(rows)) - np.repeat(np.cumsum(n_rated) - n_rated, n_rated)  # 0.. per user
            offset = rng.integers(0, 13, n)[rows]
            t = offset + 13 * slot  # distinct positions j per user: about 100/260 of them are recommended
            t_items = (a[rows, 0] + b[rows, 0] * t) % N_ITEMS
            truth_writer.write_table(
                pa.table({"user": users[rows], "item": t_items, "rating": rng.integers(1, 6, len(rows)).astype(float)},
                         schema=truth_schema)
            )  # fmt: skip


def _time_v(cmd: list[str]) -> tuple[float, dict, dict[str, float]]:
    """Wall seconds, the JSON printed and the ``/usr/bin/time -v`` figures of one process."""
    start = time.perf_counter()
    done = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, check=True, env=ENV)
    wall = time.perf_counter() - start
    figures = {}
    for label, key in (("Maximum resident set size (kbytes)", "max_rss_kb"), ("User time (seconds)", "user_s"),
                       ("System time (seconds)", "sys_s")):  # fmt: skip
        match = re.search(re.escape(label) + r":\s*([\d.]+)", done.stderr)
        figures[key] = float(match.group(1)) if match else float("nan")
    return wall, json.loads(done.stdout.strip().splitlines()[-1]), figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--shards", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--folder", type=Path, help="where the Parquet files are (written when absent)")
    parser.add_argument("--dask", action="store_true", help="also evaluate on a local Dask cluster and compare")
    args = parser.parse_args()
    print(f"load average (1 min): {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / "run.parquet").exists():
            t0 = time.perf_counter()
            generate(folder, args.users)
            print(f"generated {args.users:,} users in {time.perf_counter() - t0:.1f} s in {folder}")
        receval = str(Path(sys.executable).with_name("receval"))
        cmd = [receval, "evaluate", "--truth", str(folder / "truth.parquet"), "--recs", str(folder / "run.parquet"),
               "--metrics", METRICS, "--shards", str(args.shards), "--jobs", str(args.jobs), "--json"]  # fmt: skip
        wall, values, figures = _time_v(cmd)
        print("command: /usr/bin/time -v " + " ".join(cmd))
        print(f"receval evaluate --shards {args.shards} --jobs {args.jobs}: {wall:.1f} s wall, "
              f"{figures['user_s'] + figures['sys_s']:.1f} s CPU (parent), peak RSS "
              f"{figures['max_rss_kb'] / 1e6:.2f} GB (the largest process)")  # fmt: skip
        print("  " + json.dumps({k: v for k, v in values.items() if k != "conventions"}))
        if args.dask:
            from distributed import LocalCluster

            with LocalCluster(n_workers=args.jobs, threads_per_worker=1, dashboard_address=None) as cluster:
                dask_cmd = [*cmd[:-3], "--executor", "dask", "--scheduler", cluster.scheduler_address, "--json"]
                dask_wall, dask_values, _ = _time_v(dask_cmd)
            same = {k: v for k, v in dask_values.items() if k != "conventions"} == {
                k: v for k, v in values.items() if k != "conventions"
            }
            print(f"on Dask ({args.jobs} workers): {dask_wall:.1f} s wall; identical values: {same}")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
