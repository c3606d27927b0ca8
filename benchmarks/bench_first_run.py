"""First run of ``receval demo`` after a fresh install against the second run (issue 16).

numba compiles receval's kernels on first use and caches them on disk. A fresh install
is simulated by pointing ``NUMBA_CACHE_DIR`` at an empty temporary folder; every run
below is a whole process (``receval demo`` with its default size, 943 users x 1,682
items, 100 rounds of cyclic simulation):

1. cold: the first ``receval demo`` with an empty cache (``pip install`` alone);
2. the set-up warm-up of ``./dev`` (``receval demo`` on tiny data, which compiles the
   same kernels) in another empty cache, then the first and the second full
   ``receval demo`` on that cache — what a ``./dev`` user sees.

Target: the first ``receval demo`` after set-up at most 1.5x the second, the second
under 15 s. Wall and CPU (user + sys of the child) are printed; on a loaded machine
(load average printed) wall time inflates and CPU time shows the work done.

Usage::

    python benchmarks/bench_first_run.py            # default demo size
    python benchmarks/bench_first_run.py --quick    # small demo (smoke run)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RECEVAL = Path(sys.executable).with_name("receval")
WARM_UP = ["--users", "60", "--items", "80", "--ratings", "1500", "--rounds", "3"]  # as ./dev


def _run(args: list[str], cache: str, out: str) -> tuple[float, float]:
    """Wall and child CPU seconds of one ``receval demo`` process."""
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(RECEVAL), "demo", "--out", out, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _line(label: str, wall: float, cpu: float, note: str = "") -> None:
    print(f"  {label:<38} wall {wall:7.1f} s   cpu {cpu:7.1f} s   {note}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="a small demo instead of the default size")
    args = parser.parse_args()
    size = ["--users", "200", "--items", "300", "--ratings", "8000", "--rounds", "20"] if args.quick else []
    print(f"load average {os.getloadavg()[0]:.2f}; receval demo {' '.join(size) or '(default size)'}")
    with tempfile.TemporaryDirectory() as tmp:
        cold_cache, cache = f"{tmp}/cold", f"{tmp}/cache"
        os.mkdir(cold_cache)
        os.mkdir(cache)
        cold = _run(size, cold_cache, f"{tmp}/out")
        _line("1. first run, empty cache", *cold)
        warm = _run(WARM_UP, cache, f"{tmp}/out")
        _line("2. ./dev set-up warm-up (tiny demo)", *warm)
        first = _run(size, cache, f"{tmp}/out")
        _line("   first run after set-up", *first)
        second = _run(size, cache, f"{tmp}/out")
        _line("   second run", *second, "(target < 15 s)")
    print(
        f"first/second: after set-up {first[0] / second[0]:.2f}x wall, {first[1] / second[1]:.2f}x cpu "
        f"(target <= 1.5x); empty cache {cold[0] / second[0]:.2f}x wall, {cold[1] / second[1]:.2f}x cpu"
    )


if __name__ == "__main__":
    main()
