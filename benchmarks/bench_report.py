"""Report generation time for a result directory of many tasks (target: 200 tasks in under 20 s).

The directory is written through the result store's API (``tests/_report_data.py``):
one-shot tasks with per-user values of six metrics and user-activity slices, like
``receval run examples/quickstart.toml`` writes. Anchor: ``summarise`` (what
``receval results`` prints) on the same directory.

    python benchmarks/bench_report.py              # 200 tasks (40 configurations x 5 seeds), 943 users
    python benchmarks/bench_report.py --small      # 20 tasks, 200 users (smoke run)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import _report_data as rd
from receval.experiment.runner import summarise
from receval.experiment.store import ResultStore
from receval.report.html import build_report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="20 tasks, 200 users")
    args = parser.parse_args()
    systems, seeds, users = (4, 5, 200) if args.small else (40, 5, 943)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "results"
        t0 = time.perf_counter()
        rd.one_shot(root, systems=systems, seeds=seeds, users=users)
        print(f"wrote {systems * seeds} tasks x {users} users in {time.perf_counter() - t0:.1f}s")
        t0 = time.perf_counter()
        summarise(ResultStore(root))
        anchor = time.perf_counter() - t0
        t0 = time.perf_counter()
        c0 = time.process_time()
        path = build_report(root, Path(tmp) / "report.html", latex_dir=Path(tmp) / "tex")
        ours, cpu = time.perf_counter() - t0, time.process_time() - c0
        size = path.stat().st_size / 1e6
        print(f"anchor summarise (receval results): {anchor:.2f}s")
        print(f"receval report: {ours:.2f}s wall, {cpu:.2f}s CPU, {size:.1f} MB HTML  (ratio {ours / anchor:.1f}x)")
        print(f"target < 20 s for 200 tasks: {'met' if ours < 20 or args.small else 'NOT met'}")


if __name__ == "__main__":
    main()
