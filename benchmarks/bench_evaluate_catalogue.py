"""Evaluate over a catalogue of millions: 50,000 users × top-100 drawn from 5,000,000 distinct item ids, from Parquet.

Generates (seeded) a run ``run.parquet`` (``user, item, score``: 100 items per user,
sorted by descending score; the 5,000,000 items of the catalogue split among the
lists, so nearly every row names an item no other row names) and a truth
``truth.parquet`` (``user, item, rating``: 1-8 graded items per user, about half of
them among the user's recommendations, the rest anywhere in the catalogue). Ids are
text (``u000123``, ``i4821907``) as real logs give them; ``--int-ids`` writes integer
ids instead. Then times, as whole processes (interpreter start-up and imports
included), interleaved ``--repeat`` times:

* the anchor: a bare process that imports pyarrow and reads both files with
  ``pyarrow.parquet.read_table`` (the floor: no evaluator reads the data faster);
* ours: ``receval evaluate --truth truth.parquet --recs run.parquet --metrics <METRICS> --json``;
* with ``--trec``, the same run and truth as TREC files (``run.trec``, ``truth.qrels``): the
  anchor reads both with ``pyarrow.csv`` (space-separated), ours evaluates them (same values
  as from Parquet, checked).

Before any timing, receval's ``precision@10`` and ``recall@100`` are checked against a
plain pandas computation on the same files (hits among the top 10 / 100 of each
truth user, over 10 / the user's truth count, averaged over the truth users).
Printed: the best and median wall time of each, the least CPU time of each (all
threads: the steadier figure on a loaded machine), the peak resident memory of each
process (``os.wait4``'s ``ru_maxrss``), the ratio ours / anchor (goal ≤ 2) and the
load average before and after. The files are written and checked by a child process
(``--prepare``): Linux counts the peak of the process that starts a child into the
child's ``ru_maxrss``, so the timing process stays small.

With ``--baseline SRC`` a second source tree (the code before a change, its ``src`` folder)
is run too: its ``--json`` and ``--per-user`` output must be the same bytes as ours before
anything is timed, and it is timed interleaved with the others. Bytecode is written (these
machines set ``PYTHONDONTWRITEBYTECODE``: an edited tree would recompile every module in
each process); receval runs as ``python -m receval``, so ``PYTHONPATH`` chooses the tree.

Measured (2 cores shared with another engineer's work, load average 1.4-3.8; five runs as the change went, the
last at its final code; best of 5 as a ratio to the read, wall and CPU, the CPU the steadier; "before" is the tree
whose run's items were looked up in all of the truth's ids (``index_in``) and hashed again in slices for the repeat
check, issue 39 row "5M ids", second stop; every run byte-identical to it, --json and --per-user). The last run
(load 3.1-3.5): Parquet 1.81x wall and 1.89x CPU (before 2.48x, 2.41x), TREC 1.34x and 1.34x (1.80x, 1.76x). The
ratio of best to best moves with the anchor's luckiest run (at another, Parquet was 2.18x wall and 2.08x CPU by
best, 1.8x by median CPU), and the TREC read runs on Arrow's threads: its CPU grows with the load more than its
wall time, so the TREC ratios are lower the higher the load. ``--int-ids``: best of 3 at load 3.0-4.2, before the
last change (the anchor reads integers; receval makes each id text, as every reader does):

======================  ===========================  ===========================  ============================
files                   receval                      before                       peak memory
======================  ===========================  ===========================  ============================
Parquet, text ids       1.8-2.2x wall, 1.9-2.1x CPU  2.2-2.6x wall, 2.2-2.5x CPU  0.56-0.60 GB (was 0.56-0.63)
TREC, text ids          1.3-2.1x wall, 1.3-1.8x CPU  1.8-3.1x wall, 1.8-2.2x CPU  0.54-0.58 GB (was 0.58-0.66)
Parquet, ``--int-ids``  2.6x wall, 2.4x CPU          3.2x wall, 3.0x CPU          0.54 GB (was 0.54)
TREC, ``--int-ids``     1.9x wall, 2.0x CPU          2.6x wall, 2.6x CPU          0.58 GB (was 0.65)
======================  ===========================  ===========================  ============================

Left in receval's time (~2.5-3 s of CPU at that load): imports and the read (as the anchor's), the truth's ids
made Python strings and sorted (``Interactions``, ~0.2 s), one hash of each slice of 8,192 rows of the lists with
their users' truth items (which finds both the hits and the repeats, ~0.45 s: the largest part left; two threads
gave no wall time on the loaded machine), the sort of each list's keys for the repeat check (~0.05 s) and the
metrics (~0.2 s).

Usage::

    python benchmarks/bench_evaluate_catalogue.py                    # 50,000 users x 100 over 5M items
    python benchmarks/bench_evaluate_catalogue.py --int-ids          # the same with integer ids
    python benchmarks/bench_evaluate_catalogue.py --users 2000 --items 200000 --repeat 1   # smoke run
    python benchmarks/bench_evaluate_catalogue.py --folder /tmp/cat  # files kept there for the next run
    PYTHONPATH=src python benchmarks/bench_evaluate_catalogue.py --folder /tmp/cat --baseline /tmp/old/src
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_knn_implicit import _measure  # (wall s, peak GB, CPU s) of one whole process

METRICS = "ndcg@10,precision@10,recall@100,map@100,mrr"
# bytecode written, as an installed package has it (PYTHONDONTWRITEBYTECODE would recompile receval every run)
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
K = 100

ANCHOR = "import sys, pyarrow.parquet as pq; [pq.read_table(path) for path in sys.argv[1:]]"
ANCHOR_TREC = (
    "import sys, pyarrow.csv as csv\n"
    "options = csv.ReadOptions(autogenerate_column_names=True), csv.ParseOptions(delimiter=' ')\n"
    "[csv.read_csv(path, read_options=options[0], parse_options=options[1]) for path in sys.argv[1:]]"
)


def generate(folder: Path, n_users: int, n_items: int, *, int_ids: bool = False, seed: int = 0) -> None:
    """Write ``run.parquet`` and ``truth.parquet``: ``n_users`` lists of ``K`` items out of ``n_items`` ids."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    if n_items < n_users * K:
        raise SystemExit(f"--items must be at least users x {K} = {n_users * K} (each list names its own items)")
    rng = np.random.default_rng(seed)
    # item numbers: n_items distinct values scattered over a wide range (ids are not a compact 0..n-1 range)
    item_numbers = np.sort(rng.choice(10 * n_items, size=n_items, replace=False)) + 1
    catalogue = item_numbers[rng.permutation(n_items)]  # the lists take the catalogue in this order
    users = np.repeat(np.arange(1, n_users + 1), K)
    run_items = catalogue[: n_users * K]
    scores = np.sort(rng.random((n_users, K)), axis=1)[:, ::-1].ravel()
    n_rated = rng.integers(1, 9, n_users)
    rows = np.repeat(np.arange(n_users), n_rated)
    slot = np.arange(len(rows)) - np.repeat(np.cumsum(n_rated) - n_rated, n_rated)
    picked = rng.random(len(rows)) < 0.5  # half of the truth among the user's own list, the rest anywhere
    # distinct per user: a list position (2 * slot + offset < K) or a catalogue item none of the lists hold
    own = catalogue[rows * K + 2 * slot + rng.integers(0, 2, len(rows))]
    elsewhere = catalogue[n_users * K :] if n_items > n_users * K else catalogue
    other = elsewhere[rng.integers(0, len(elsewhere), len(rows))]
    t_items = np.where(picked, own, other)
    t_users = rows + 1
    keep = np.ones(len(rows), dtype=bool)  # a user may draw the same catalogue item twice: keep the first
    order = np.lexsort((t_items, t_users))
    dup = (t_users[order][1:] == t_users[order][:-1]) & (t_items[order][1:] == t_items[order][:-1])
    keep[order[1:][dup]] = False
    ratings = rng.integers(1, 6, len(rows)).astype(np.float64)

    def ids(prefix: str, numbers: np.ndarray) -> pa.Array:
        if int_ids:
            return pa.array(numbers.astype(np.int64))
        return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")

    pq.write_table(pa.table({"user": ids("u", users), "item": ids("i", run_items), "score": scores}),
                   folder / "run.parquet")  # fmt: skip
    pq.write_table(
        pa.table({"user": ids("u", t_users[keep]), "item": ids("i", t_items[keep]), "rating": ratings[keep]}),
        folder / "truth.parquet",
    )


def write_trec(folder: Path) -> None:
    """``run.trec`` (``user Q0 item rank score tag``) and ``truth.qrels`` (``user 0 item grade``) of those rows."""
    import pyarrow as pa
    import pyarrow.csv as csv
    import pyarrow.parquet as pq

    run, truth = pq.read_table(folder / "run.parquet"), pq.read_table(folder / "truth.parquet")
    rank = np.tile(np.arange(1, K + 1), run.num_rows // K)  # the run is written ranked, K items a user
    n, m = run.num_rows, truth.num_rows
    options = csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    columns = {"q": run["user"], "z": pa.array(["Q0"] * n), "d": run["item"], "r": rank, "s": run["score"],
               "t": pa.array(["bench"] * n)}  # fmt: skip
    csv.write_csv(pa.table(columns), folder / "run.trec", options)
    grades = pa.array(truth["rating"].to_numpy().astype(np.int64))
    csv.write_csv(pa.table({"q": truth["user"], "z": pa.array(np.zeros(m, dtype=np.int64)), "d": truth["item"],
                            "g": grades}), folder / "truth.qrels", options)  # fmt: skip


def reference(folder: Path) -> dict[str, float]:
    """precision@10 and recall@100 of the files by pandas: hits per truth user, averaged over the truth users."""
    import pandas as pd

    truth = pd.read_parquet(folder / "truth.parquet")
    run = pd.read_parquet(folder / "run.parquet")
    run["position"] = run.groupby("user").cumcount() + 1  # the run is written ranked, user by user
    hits = run.merge(truth[["user", "item"]], on=["user", "item"])
    n_truth = truth.groupby("user").size()
    at10 = hits[hits["position"] <= 10].groupby("user").size().reindex(n_truth.index, fill_value=0)
    at100 = hits[hits["position"] <= 100].groupby("user").size().reindex(n_truth.index, fill_value=0)
    return {"precision@10": float((at10 / 10).mean()), "recall@100": float((at100 / n_truth).mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=50_000)
    parser.add_argument("--items", type=int, default=5_000_000, help="distinct item ids (at least users x 100)")
    parser.add_argument("--int-ids", action="store_true", help="integer ids instead of text")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--folder", type=Path, help="where the files are (written when absent)")
    parser.add_argument("--trec", action="store_true", help="also time the same data as TREC run and qrels files")
    parser.add_argument("--baseline", help="a second source tree (its src folder): same output, timed alongside")
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)  # the child that writes and checks
    args = parser.parse_args()
    if args.prepare:
        if not (args.folder / "run.parquet").exists():
            generate(args.folder, args.users, args.items, int_ids=args.int_ids)
        if args.trec and not (args.folder / "run.trec").exists():
            write_trec(args.folder)
        print(json.dumps(reference(args.folder)))
        return
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.folder or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        prepare = [sys.executable, __file__, "--prepare", "--folder", str(folder), "--users", str(args.users),
                   "--items", str(args.items), *(["--int-ids"] if args.int_ids else []),
                   *(["--trec"] if args.trec else [])]  # fmt: skip
        expected = json.loads(subprocess.run(prepare, capture_output=True, text=True, check=True).stdout)
        truth, run = str(folder / "truth.parquet"), str(folder / "run.parquet")
        ours = [sys.executable, "-m", "receval", "evaluate", "--truth", truth, "--recs", run, "--metrics", METRICS,
                "--empty-users", "zero", "--json"]  # fmt: skip
        pairs = {"": ([sys.executable, "-c", ANCHOR, truth, run], ours)}
        if args.trec:
            qrels, trec = str(folder / "truth.qrels"), str(folder / "run.trec")
            pairs[" (TREC)"] = ([sys.executable, "-c", ANCHOR_TREC, qrels, trec],
                                [*ours[:4], "--truth", qrels, "--recs", trec, *ours[8:]])  # fmt: skip
        baseline_env = {**ENV, "PYTHONPATH": str(Path(args.baseline).resolve())} if args.baseline else None
        values = {}
        for label, (_, command) in pairs.items():
            printed = {}
            for tree, env in (("ours", ENV), ("baseline", baseline_env)):
                if env is None:
                    continue
                table = folder / f"per_user_{tree}.tsv"
                done = subprocess.run([*command, "--per-user", str(table)], capture_output=True, check=True, env=env)
                printed[tree] = (done.stdout, table.read_bytes())
            if "baseline" in printed and printed["baseline"] != printed["ours"]:
                sys.exit(f"the baseline tree prints other bytes{label} (--json or --per-user): not timed")
            values[label] = {k: v for k, v in json.loads(printed["ours"][0].decode().strip().splitlines()[-1]).items()
                             if k != "conventions"}  # fmt: skip
            for metric, value in expected.items():
                if not np.isclose(values[label][metric], value, rtol=0, atol=1e-12):
                    sys.exit(f"{metric}{label}: receval {values[label][metric]!r} but pandas {value!r}: not timed")
        if values.get(" (TREC)", values[""]) != values[""]:
            sys.exit(f"TREC files give {values[' (TREC)']}, Parquet {values['']}: not timed")
        same = " and byte-identical to the baseline tree (--json, --per-user)" if baseline_env else ""
        print(f"checked against pandas: {expected}{same}")
        figures: dict[str, list[tuple[float, float, float]]] = {}
        for _ in range(args.repeat):
            for label, (anchor, command) in pairs.items():
                figures.setdefault(f"anchor{label}", []).append(_measure(anchor, ENV))
                figures.setdefault(f"receval{label}", []).append(_measure(command, ENV))
                if baseline_env is not None:
                    figures.setdefault(f"baseline{label}", []).append(_measure(command, baseline_env))
                shown = [
                    f"{name} {runs[-1][0]:.2f} s wall {runs[-1][2]:.2f} s CPU {runs[-1][1] * 1e3:.0f} MB"
                    for name, runs in figures.items()
                    if name.endswith(label) and (label or "TREC" not in name)
                ]
                load = " ".join(f"{x:.2f}" for x in os.getloadavg())
                print(f"  {label or '(Parquet)'}: {', '.join(shown)}; load {load}", flush=True)  # fmt: skip
    for _, command in pairs.values():
        print("command: " + " ".join(command))
    best = {}
    for name, runs in figures.items():
        walls = [wall for wall, _, _ in runs]
        best[name] = min(walls)
        cpu, peak = min(c for _, _, c in runs), max(gb for _, gb, _ in runs) * 1e3
        print(f"{name:<16} best {min(walls):6.2f} s  median {statistics.median(walls):6.2f} s  "
              f"CPU {cpu:6.2f} s  peak {peak:7.0f} MB")  # fmt: skip
    least = {name: min(c for _, _, c in runs) for name, runs in figures.items()}
    for label in pairs:
        for name in ("receval", "baseline"):
            if name + label in best:
                print(f"ratio {name} / read{label}: {best[name + label] / best['anchor' + label]:.2f}x wall, "
                      f"{least[name + label] / least['anchor' + label]:.2f}x CPU (goal ≤ 2)")  # fmt: skip
    print("  " + json.dumps(values[""]))
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
