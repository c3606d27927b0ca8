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

``--floor`` times instead, on TREC files written chunk by chunk (``run.trec``: 100 items a
user; ``truth.qrels``: 2-40 graded items a user), ``receval evaluate`` against the floor: a
bare process that imports numpy and pyarrow and reads both files with ``pyarrow.csv``. It
first checks receval's ``precision@10`` and ``recall@100`` against numpy counts made while
writing the files (to 1e-12), and with ``--baseline SRC`` that a second source tree (the
code before a change) prints the same bytes (``--json``, and the ``--per-user`` table).
Printed for each, interleaved ``--repeat`` times: best and median wall, least CPU (user +
system of the child, all threads) and peak resident memory, and the ratios to the floor.
Bytecode is written (these machines set ``PYTHONDONTWRITEBYTECODE``; without .pyc files an
edited tree recompiles every module in each process).

Usage::

    python benchmarks/bench_evaluate_io.py             # 30,000 users x top-100
    python benchmarks/bench_evaluate_io.py --users 2000 --force   # smoke run
    PYTHONPATH=src python benchmarks/bench_evaluate_io.py --floor --users 300000 --folder /tmp/io300k
    PYTHONPATH=src python benchmarks/bench_evaluate_io.py --floor --users 300000 --baseline /tmp/old/src
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
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


FLOOR = (
    "import sys, numpy, pyarrow, pyarrow.csv as csv\n"
    "options = csv.ReadOptions(autogenerate_column_names=True), csv.ParseOptions(delimiter=' ')\n"
    "[csv.read_csv(path, read_options=options[0], parse_options=options[1]) for path in sys.argv[1:]]"
)
"""The floor: numpy and pyarrow imported, both TREC files read by Arrow's multi-threaded CSV reader."""
# bytecode written, as an installed package has it (PYTHONDONTWRITEBYTECODE would recompile receval every run)
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def generate_trec(folder: Path, n_users: int, k: int = 100, n_items: int = 20_000) -> dict[str, float]:
    """``run.trec`` and ``truth.qrels`` for ``n_users`` users (chunks of 10,000 seeded by their index, as
    :func:`generate` draws them, never all in memory); precision@10 and recall@100 counted with numpy."""
    import pyarrow as pa
    import pyarrow.csv as csv

    popularity = 1.0 / np.arange(1, n_items + 1) ** 0.8
    popularity /= popularity.sum()
    options = csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_schema = pa.schema([("q", pa.int64()), ("z", pa.string()), ("d", pa.int64()), ("r", pa.int64()),
                            ("s", pa.float64()), ("t", pa.string())])  # fmt: skip
    truth_schema = pa.schema([("q", pa.int64()), ("z", pa.int64()), ("d", pa.int64()), ("g", pa.int64())])
    precision, recall = [], []
    with (
        csv.CSVWriter(folder / "run.trec", run_schema, write_options=options) as run_writer,
        csv.CSVWriter(folder / "truth.qrels", truth_schema, write_options=options) as truth_writer,
    ):
        for start in range(0, n_users, 10_000):
            rng = np.random.default_rng([0, start])
            n = min(10_000, n_users - start)
            users = np.arange(start + 1, start + n + 1)
            n_rated = rng.integers(2, 41, n)
            t_users = np.repeat(users, n_rated)
            t_items = rng.choice(n_items, size=len(t_users), p=popularity) + 1
            first = np.sort(np.unique(t_users * (n_items + 1) + t_items, return_index=True)[1])  # one row a pair
            t_users, t_items = t_users[first], t_items[first]
            grades = rng.integers(1, 6, len(t_users))
            truth_writer.write_table(pa.table({"q": t_users, "z": np.zeros(len(t_users), dtype=np.int64),
                                               "d": t_items, "g": grades}, schema=truth_schema))  # fmt: skip
            items = np.argsort(rng.random((n, n_items // 20)), axis=1)[:, :k] * 20 + 1
            scores = np.round(np.sort(rng.random((n, k)), axis=1)[:, ::-1] + 1.0, 9)
            run_writer.write_table(pa.table({"q": np.repeat(users, k), "z": pa.array(["Q0"] * (n * k)),
                                             "d": items.ravel(), "r": np.tile(np.arange(1, k + 1), n),
                                             "s": scores.ravel(), "t": pa.array(["bench"] * (n * k))},
                                            schema=run_schema))  # fmt: skip
            hit = np.isin(users[:, None] * (n_items + 1) + items, t_users * (n_items + 1) + t_items)
            precision.append(hit[:, :10].sum(axis=1) / 10)
            recall.append(hit.sum(axis=1) / np.bincount(t_users - start - 1, minlength=n))
    return {"precision@10": float(np.concatenate(precision).mean()), "recall@100": float(np.concatenate(recall).mean())}


def _measure(command: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, peak resident GB, CPU seconds: user + system of the child and its threads)."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        assert process.stderr is not None
        sys.exit(f"{command[0]} failed: {process.stderr.read().decode()[-2000:]}")
    process.returncode = 0
    return wall, usage.ru_maxrss / 1e6, usage.ru_utime + usage.ru_stime


def floor(args: argparse.Namespace) -> None:
    """``--floor``: receval evaluate of TREC files against reading them (see the module's docstring)."""
    folder = args.folder
    folder.mkdir(parents=True, exist_ok=True)
    facts = folder / "reference.json"
    if args.prepare:
        facts.write_text(json.dumps(generate_trec(folder, args.users)))
        return
    if not facts.exists():  # by a child: Linux counts the peak of the process starting a child into the child's
        t0 = time.perf_counter()
        prepare = [
            sys.executable,
            __file__,
            "--floor",
            "--prepare",
            "--folder",
            str(folder),
            "--users",
            str(args.users),
        ]
        subprocess.run(prepare, check=True, capture_output=True)
        print(f"wrote {args.users:,} users in {time.perf_counter() - t0:.1f} s to {folder}")
    expected = json.loads(facts.read_text())
    truth, run = str(folder / "truth.qrels"), str(folder / "run.trec")
    ours = [sys.executable, "-m", "receval", "evaluate", "--truth", truth, "--recs", run, "--metrics",
            ",".join(METRICS), "--json"]  # fmt: skip
    commands = {"floor": [sys.executable, "-c", FLOOR, truth, run], "receval": ours}
    envs = {"floor": ENV, "receval": ENV}
    if args.baseline:
        commands["baseline"] = ours
        envs["baseline"] = {**ENV, "PYTHONPATH": str(Path(args.baseline).resolve())}
    outputs = {}
    for name in [n for n in commands if n != "floor"]:
        done = subprocess.run([*commands[name], "--per-user", str(folder / f"{name}.tsv")], env=envs[name],
                              capture_output=True, check=True)  # fmt: skip
        outputs[name] = (done.stdout, (folder / f"{name}.tsv").read_bytes())
    values = json.loads(outputs["receval"][0].decode().strip().splitlines()[-1])
    for metric, value in expected.items():
        if not np.isclose(values[metric], value, rtol=0, atol=1e-12):
            sys.exit(f"{metric}: receval {values[metric]!r} but numpy {value!r}: not timed")
    if args.baseline and outputs["baseline"] != outputs["receval"]:
        sys.exit("the baseline tree prints other bytes (--json or --per-user): not timed")
    same = " and byte-identical to the baseline (--json, --per-user)" if args.baseline else ""
    print(f"checked against numpy: {expected}{same}")
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            figures[name].append(_measure(command, envs[name]))
            print(f"  {name:<9} {figures[name][-1][0]:6.2f} s wall {figures[name][-1][2]:6.2f} s CPU "
                  f"{figures[name][-1][1] * 1e3:6.0f} MB   load {' '.join(f'{x:.2f}' for x in os.getloadavg())}",
                  flush=True)  # fmt: skip
    print("command: " + " ".join(ours))
    least = {name: min(c for _, _, c in runs) for name, runs in figures.items()}
    for name, runs in figures.items():
        walls = [wall for wall, _, _ in runs]
        peaks = [gb * 1e3 for _, gb, _ in runs]
        print(f"{name:<9} best {min(walls):6.2f} s  median {statistics.median(walls):6.2f} s  CPU {least[name]:6.2f} s "
              f"(median {statistics.median(c for _, _, c in runs):6.2f})  peak {max(peaks):6.0f} MB "
              f"(least {min(peaks):6.0f})")  # fmt: skip
    for name in commands:
        if name != "floor":
            walls = {n: statistics.median(w for w, _, _ in figures[n]) for n in (name, "floor")}
            print(f"ratio {name} / floor: {walls[name] / walls['floor']:.2f}x median wall, "
                  f"{least[name] / least['floor']:.2f}x CPU (goal ≤ 1.2)")  # fmt: skip


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
    parser.add_argument("--floor", action="store_true", help="TREC files: receval against reading them (pyarrow.csv)")
    parser.add_argument("--folder", type=Path, help="--floor: where the files are (written when absent)")
    parser.add_argument("--baseline", help="--floor: a source tree (its src folder) whose output must be identical")
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)  # the child that writes the files
    args = parser.parse_args()
    if args.prepare:
        floor(args)
        return
    load = os.getloadavg()[0]
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    if args.floor:
        with tempfile.TemporaryDirectory() as tmp:
            args.folder = args.folder or Path(tmp)
            floor(args)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
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
