"""Whole-process cost of ``receval evaluate`` with and without the allocator tuning of the entry point.

The ``receval`` entry point tunes glibc's allocator for the commands listed in
``receval.cli.app.TUNED_COMMANDS`` (``RECEVAL_MALLOC_TUNING=0`` turns it off). This runs
``receval evaluate`` on the truth and run of ``bench_evaluate_io`` (30,000 users x top-100:
3 million run rows) under ``/usr/bin/time -v``, alternating tuned and untuned runs
``--repeat`` times, and prints for each the median wall, user and system time, page faults
and peak resident memory, with the load average before and after. User + system time
is the figure to read on a shared machine (wall time follows the other processes).

Usage::

    python benchmarks/bench_process_tuning.py                    # 30,000 users, 5 runs each
    python benchmarks/bench_process_tuning.py --users 3000 --repeat 2   # smoke run
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_evaluate_io import METRICS, generate

FIELDS = {
    "wall s": r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)",
    "user s": r"User time \(seconds\): ([\d.]+)",
    "system s": r"System time \(seconds\): ([\d.]+)",
    "minor faults": r"Minor \(reclaiming a frame\) page faults: (\d+)",
    "peak RSS MB": r"Maximum resident set size \(kbytes\): (\d+)",
}


def _measure(cmd: list[str], env: dict[str, str]) -> dict[str, float]:
    """The :data:`FIELDS` of one run of ``cmd`` under ``/usr/bin/time -v``."""
    done = subprocess.run(["/usr/bin/time", "-v", *cmd], env=env, capture_output=True, text=True, check=True)
    out = {}
    for name, pattern in FIELDS.items():
        found = re.search(pattern, done.stderr)
        if found is None:
            sys.exit(f"/usr/bin/time -v printed no {name!r}:\n{done.stderr}")
        if name == "wall s":
            hours, minutes, seconds = found.groups()
            out[name] = 3600 * float(hours or 0) + 60 * float(minutes) + float(seconds)
        else:
            out[name] = float(found.group(1)) / (1024 if name == "peak RSS MB" else 1)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not Path("/usr/bin/time").exists():
        sys.exit("needs GNU time (/usr/bin/time -v)")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    receval = str(Path(sys.executable).with_name("receval"))
    base = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    variants = {"tuned": {**base, "RECEVAL_MALLOC_TUNING": "1"}, "untuned": {**base, "RECEVAL_MALLOC_TUNING": "0"}}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        generate(folder, args.users)
        cmd = [receval, "evaluate", "--truth", str(folder / "truth.tsv"), "--recs", str(folder / "run.tsv"),
               "--metrics", ",".join(METRICS), "--empty-users", "zero", "--json"]  # fmt: skip
        _measure(cmd, base)  # warm-up: numba's cache, the files in the page cache
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        for _ in range(args.repeat):
            for name, env in variants.items():
                runs[name].append(_measure(cmd, env))
    print(f"{'':10}" + "".join(f"{field:>14}" for field in FIELDS) + f"{'user+system s':>15}")
    for name, measured in runs.items():
        medians = [statistics.median(run[field] for run in measured) for field in FIELDS]
        cpu = statistics.median(run["user s"] + run["system s"] for run in measured)
        print(f"{name:10}" + "".join(f"{value:14.2f}" for value in medians) + f"{cpu:15.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
