"""Start-up as whole processes, against a written budget: what a command costs before its work.

Each command is a new interpreter (start-up, imports, the command line built, and for the
``evaluate``/``predict`` lines everything up to reading the first file, which does not exist:
they stop there with status 2), run ``--repeat`` times in turn after one warm-up run each.
The median CPU time (user + sys of the child: on a shared machine wall time grows with the
load, printed before and after) of each is divided by its anchor's, measured in the same run:

* ``import numpy``, for what needs no data library (``import receval``, the help texts);
* ``import numpy, pyarrow.csv`` (what the floor of ``receval evaluate`` imports before reading
  its files with ``pyarrow.csv``), for the fixed costs of a command that reads data.

:data:`BUDGET` holds the largest ratio each command may reach; the script exits with status 1
when a median is over it. ``receval --help`` builds every command (it lists them all); a command
line builds only its own (``receval.cli._index``). What each line costs above its anchor, and
why, is written next to its budget. Which libraries each path imports is a test
(``tests/test_startup.py``), not a timing.

Usage::

    python benchmarks/bench_startup.py              # 15 runs of each
    python benchmarks/bench_startup.py --repeat 5
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable
RECEVAL = str(Path(PYTHON).with_name("receval"))
NUMPY = 'python -c "import numpy"'
FLOOR = 'python -c "import numpy, pyarrow.csv"'
_MISSING = "missing-file.tsv"  # the commands below stop at reading it: what they cost before their work
_EVALUATE = ["evaluate", "--truth", _MISSING, "--recs", _MISSING, "--metrics", "ndcg@10,precision@10,recall@100,mrr"]
_PREDICT = ["predict", "--train", _MISSING, "--test", _MISSING, "--algorithm", "item-knn", "--out", "pred.tsv"]
COMMANDS: dict[str, tuple[list[str], int]] = {  # name -> (command line, the exit status it ends with)
    NUMPY: ([PYTHON, "-c", "import numpy"], 0),
    FLOOR: ([PYTHON, "-c", "import numpy, pyarrow.csv"], 0),
    'python -c "import receval"': ([PYTHON, "-c", "import receval"], 0),
    "receval --help": ([RECEVAL, "--help"], 0),
    "python -m receval --help": ([PYTHON, "-m", "receval", "--help"], 0),
    "receval evaluate --help": ([RECEVAL, "evaluate", "--help"], 0),
    "receval predict --help": ([RECEVAL, "predict", "--help"], 0),
    "receval evaluate (to reading)": ([RECEVAL, *_EVALUATE], 2),
    "receval predict (to reading)": ([RECEVAL, *_PREDICT], 2),
    "receval run (refused)": ([RECEVAL, "run", "missing-config.toml"], 2),
}
# command -> (its anchor, the largest ratio of CPU medians allowed). Measured 2026-12-06, load 3.9-6 (median of 3
# and 9 runs): before the lazy command registration / after it (the margin is for the load's noise)
BUDGET: dict[str, tuple[str, float]] = {
    # 0.40x / 0.37-0.46x: logging and errors only; every public name loads on first use (PEP 562)
    'python -c "import receval"': (NUMPY, 0.7),
    # 1.47-1.54x / 1.37-1.62x: typer and click, every command module imported and every command's parameters
    # built (typer reads each annotation), to list them all
    "receval --help": (NUMPY, 2.0),
    "python -m receval --help": (NUMPY, 2.0),
    # 1.53-1.60x / 0.81-1.00x: typer and click, one command module, one command built
    "receval evaluate --help": (NUMPY, 1.3),
    "receval predict --help": (NUMPY, 1.3),
    # 2.88x / 2.00x / 1.24x (2026-12-07, load 2.5, 15 runs; main's tree in the same hour 2.07x): typer and the
    # evaluation's modules (metrics registered at import; pyarrow, in the anchor, is not imported yet). No
    # scipy.sparse since the alignment's rows are receval.data.csr.CSR: it cost 0.15 s CPU over numpy +
    # pyarrow.csv, 0.10 s of it numpy.testing, numpy.f2py and numpy.ma (scipy's array-API layer clones numpy's
    # namespace, hasattr on every name, which imports each lazy submodule)
    "receval evaluate (to reading)": (FLOOR, 1.6),
    # 2.79x / 1.84-1.93x / 1.08x (2026-12-07, as above; main's tree 1.94x): the data loaders, without
    # scipy.sparse since receval.data.interactions imports it where it builds a matrix; the recommenders and
    # numba are imported after reading, when the model is fitted
    "receval predict (to reading)": (FLOOR, 1.5),
    # 3.5-4.5x (2026-12-07/08, load 0.6-1.1, 5 runs: 0.95-1.17 s CPU; 2.52 s, 8.8x, before the runner's validation
    # and the slices' vocabulary stopped importing scipy.stats and scipy.optimize): pandas and the experiment's
    # modules, imported before the configuration is read
    "receval run (refused)": (FLOOR, 5.5),
}
# bytecode written, as an installed package has it (PYTHONDONTWRITEBYTECODE would recompile receval every run)
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
ENV["OPENBLAS_NUM_THREADS"] = "1"


def _run(cmd: list[str], status: int, cwd: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + sys of the child) of one process, which must end with ``status``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV, cwd=cwd, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != status:
        raise SystemExit(f"{' '.join(cmd)}: exit status {done.returncode}, expected {status}\n{done.stderr.decode()}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    cwd = str(Path(__file__).resolve().parent)  # no file named missing-file.tsv there
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for cmd, status in COMMANDS.values():  # warm the file cache and the bytecode caches
        _run(cmd, status, cwd)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):
        for name, (cmd, status) in COMMANDS.items():
            times[name].append(_run(cmd, status, cwd))
    wall = {name: statistics.median(w for w, _ in values) for name, values in times.items()}
    cpu = {name: statistics.median(c for _, c in values) for name, values in times.items()}
    over = []
    print(f"{'command':<38} {'wall':>7} {'CPU':>7} {'anchor':>9} {'CPU ratio':>10} {'budget':>7}")
    for name in COMMANDS:
        anchor, limit = BUDGET.get(name, (None, None))
        line = f"{name:<38} {wall[name]:6.3f}s {cpu[name]:6.3f}s"
        if anchor is not None and limit is not None:
            ratio = cpu[name] / cpu[anchor]
            verdict = "ok" if ratio <= limit else "OVER"
            line += f" {'numpy' if anchor == NUMPY else 'np+pa.csv':>9} {ratio:9.2f}x {limit:6.1f}x {verdict}"
            if ratio > limit:
                over.append(name)
        print(line)
    print(f"load average after: {os.getloadavg()[0]:.2f}", flush=True)
    if over:
        raise SystemExit(f"over budget: {', '.join(over)}")


if __name__ == "__main__":
    main()
