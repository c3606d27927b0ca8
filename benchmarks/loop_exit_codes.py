"""Exit statuses under load: 1,000 failing and succeeding commands, none may end other than 0 or 2.

Not a test and not timed: run by hand. Each command is a real process
(``python -m receval ...`` through ``bash -c``, so redirections such as ``>&-`` and
``> /dev/full`` are the shell's), drawn in turn from a mix of bad inputs (missing files,
bad options, values off the scale, unknown names, names with brackets, a full or closed
stdout, under ``--json`` too) and small good runs (``algorithms``, ``evaluate``,
``recommend``, ``split``, ``data stats``, ``results``), while CPU hogs keep the cores
busy. A reader leaving a pipe (status 141 by design) is not in the mix.

Prints a tally of statuses and every command that ended otherwise (with the last lines
of its stderr), e.g. a traceback (1) or a crash at exit (139, -11).

Usage::

    python benchmarks/loop_exit_codes.py                      # 1,000 commands, 2 at a time, 1 hog
    python benchmarks/loop_exit_codes.py --commands 40        # smoke run
    nohup python benchmarks/loop_exit_codes.py > loop.log &   # the long run, watched with tail
"""

from __future__ import annotations

import argparse
import collections
import itertools
import os
import shlex
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pandas as pd

from receval.cli import main

EXPECTED = (0, 2)
CONFIG = """name = "loop"
seeds = 1
metrics = ["ndcg@10"]

[datasets.toy]
generate = { n_users = 40, n_items = 30, n_ratings = 600 }

[split]
method = "holdout"
test_fraction = 0.2

[protocol]
name = "one-shot"
k = 10

[recommenders."pop[bold]"]
algorithm = "popularity"
"""


def fixtures(folder: Path) -> dict[str, Path]:
    """Tiny inputs: 200 users x 10 ratings, a truth and a run from them, bad files, a finished experiment."""
    rng = np.random.default_rng(0)
    rows = [(u, int(i), int(rng.integers(1, 6))) for u in range(200) for i in rng.choice(50, 10, replace=False)]
    data = pd.DataFrame(rows, columns=["user", "item", "rating"])
    f = {name: folder / f"{name}.csv" for name in ("data", "truth", "recs", "header_only", "bad_rating")}
    data.to_csv(f["data"], index=False)
    truth = data.iloc[::3]
    truth.to_csv(f["truth"], index=False)
    truth[["user", "item"]].assign(score=rng.random(len(truth))).to_csv(f["recs"], index=False)
    f["header_only"].write_text("user,item,rating\n", encoding="utf-8")
    f["bad_rating"].write_text("user,item,rating\n1,1,4\n1,2,inf\n", encoding="utf-8")
    f["config"] = folder / "exp.toml"
    f["config"].write_text(CONFIG, encoding="utf-8")
    f["results"] = folder / "results"
    with open(os.devnull, "w") as null:
        saved, sys.stdout = sys.stdout, null
        try:
            assert main(["run", str(f["config"]), "--out", str(f["results"])]) == 0
        finally:
            sys.stdout = saved
    return f


def commands(f: dict[str, Path], work: Path) -> list[str]:
    """The mix, as shell lines; outputs go to fresh names under ``work`` (``{n}`` is the command's number)."""
    py = shlex.quote(sys.executable)
    q = {k: shlex.quote(str(v)) for k, v in f.items()}
    out = shlex.quote(str(work)) + "/{n}"
    ev = f"evaluate --truth {q['truth']} --recs {q['recs']}"
    lines = [
        # bad inputs
        f"{ev} --metrics nosuchmetric@10",
        f"{ev} --metrics ndcg@10 --threshold 10",
        f"{ev} --metrics ndcg@10 --threshold nan --json",
        "evaluate --truth missing.csv --recs r.csv --metrics mrr --json",
        "evaluate --truth missing.csv --recs r.csv --metrics mrr --json > /dev/full",
        "evaluate --truth missing.csv --recs r.csv --metrics mrr >&-",
        f"evaluate --truth {q['header_only']} --recs {q['recs']} --metrics mrr",
        f"recommend --train {q['data']} --algorithm 'pop[bold]' --out {out}.tsv",
        f"recommend --train {q['data']} --algorithm popularity --k 0 --out {out}.tsv",
        f"recommend --train {q['bad_rating']} --algorithm popularity --out {out}.tsv",
        f"recommend --train {q['data']} --algorithm popularity --out {out}/{'x' * 300}.tsv",
        f"split {q['data']} --format csv --test-fraction 1.5 --out {out}",
        f"split {q['data']} --format nosuchformat --out {out}",
        f"data stats {q['data']} --format csv --seed -1",
        "report no/such/store",
        f"results {q['results']} --compare nosuchmetric",
        f"run {q['config']} --out {q['results']}/../theirs --jobs 0",
        "no-such-command",
        "algorithms > /dev/full",
        "algorithms >&-",
        f"results {q['results']} > /dev/full",
        # good runs
        "algorithms",
        "--version",
        f"{ev} --metrics ndcg@10,mrr --json",
        f"{ev} --metrics ndcg@10 --per-user {out}.tsv",
        f"recommend --train {q['data']} --algorithm popularity --k 5 --out {out}.tsv",
        f"split {q['data']} --format csv --out {out}",
        f"data stats {q['data']} --format csv",
        f"results {q['results']}",
        "data list --output json",
    ]
    return [f"{py} -m receval {line}" for line in lines]


def hog() -> subprocess.Popen:
    """One process spinning a core until it is killed."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def run_one(n: int, line: str) -> tuple[int, str, int, str]:
    command = line.replace("{n}", str(n))
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    proc = subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=env, timeout=600, check=False)
    return n, command, proc.returncode, "\n".join(proc.stderr.strip().splitlines()[-5:])


def main_loop() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--commands", type=int, default=1000, help="How many commands to run.")
    parser.add_argument("--jobs", type=int, default=2, help="Commands run at a time.")
    parser.add_argument("--hogs", type=int, default=1, help="CPU-spinning processes meanwhile.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="receval-loop-") as tmp:
        root = Path(tmp)
        f = fixtures(root)
        work = root / "out"
        work.mkdir()
        mix = commands(f, work)
        hogs = [hog() for _ in range(args.hogs)]
        tally: collections.Counter[int] = collections.Counter()
        odd: list[tuple[int, str, int, str]] = []
        try:
            with ThreadPoolExecutor(args.jobs) as pool:
                jobs = zip(range(args.commands), itertools.cycle(mix), strict=False)
                for done, (n, command, status, err) in enumerate(pool.map(lambda job: run_one(*job), jobs), 1):
                    tally[status] += 1
                    if status not in EXPECTED:
                        odd.append((n, command, status, err))
                        print(f"UNEXPECTED status {status}: {command}\n{err}", flush=True)
                    if done % 50 == 0:
                        print(f"{done}/{args.commands} done; statuses so far {dict(sorted(tally.items()))}", flush=True)
        finally:
            for process in hogs:
                process.kill()
                process.wait()
    print(f"\n{sum(tally.values())} commands ({len(mix)} kinds), {args.jobs} at a time, {args.hogs} CPU hog(s)")
    print("statuses: " + ", ".join(f"{status}: {count}" for status, count in sorted(tally.items())))
    print(f"other than {' or '.join(map(str, EXPECTED))}: {len(odd)}")
    for n, command, status, err in odd:
        print(f"  #{n} status {status}: {command}\n    " + err.replace("\n", "\n    "))
    return 1 if odd else 0


if __name__ == "__main__":
    sys.exit(main_loop())
