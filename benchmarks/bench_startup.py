"""Start-up as whole processes: ``receval --help`` and ``import receval`` against ``import numpy``.

Each command is a new interpreter (start-up, imports and, for ``--help``, the command
line built and printed), run ``--repeat`` times in turn; the median wall time of each
is printed with its ratio to the anchor ``python -c "import numpy"`` measured in the
same run (target: at most 2x). The load average is printed before and after: on a
busy machine the ratios hold better than the seconds.

Usage::

    python benchmarks/bench_startup.py              # 15 runs of each
    python benchmarks/bench_startup.py --repeat 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

PYTHON = sys.executable
COMMANDS = {
    'python -c "import numpy"': [PYTHON, "-c", "import numpy"],
    'python -c "import receval"': [PYTHON, "-c", "import receval"],
    "receval --help": [str(Path(PYTHON).with_name("receval")), "--help"],
    "python -m receval --help": [PYTHON, "-m", "receval", "--help"],
    "receval evaluate --help": [str(Path(PYTHON).with_name("receval")), "evaluate", "--help"],
}
ANCHOR = 'python -c "import numpy"'
# bytecode written, as an installed package has it (PYTHONDONTWRITEBYTECODE would recompile receval every run)
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def _seconds(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=ENV)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for cmd in COMMANDS.values():  # warm the file cache and the bytecode caches
        _seconds(cmd)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(args.repeat):
        for name, cmd in COMMANDS.items():
            times[name].append(_seconds(cmd))
    anchor = statistics.median(times[ANCHOR])
    print(f"{'command':<30} {'median':>8} {'ratio to numpy':>15}   (target <= 2x)")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"{name:<30} {median:7.3f}s {median / anchor:14.2f}x")
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
