"""Loader speed and memory: ``receval.data.load(path, "csv")`` against plain ``pandas.read_csv``.

Generates a MovieLens-25M-sized ratings CSV (``user,item,rating,timestamp``; 162,541
users, 59,047 items with power-law popularity, ratings 0.5..5 step 0.5) in a
temporary folder, then

* times ``pandas.read_csv(path)`` (the anchor, default C engine) and
  ``receval.data.load(path, "csv")`` in this process, alternating ``--repeat`` times
  and keeping the best of each, and reports the time ratio (target: at most 1.5);
* measures the peak resident memory of each in a fresh child process (``VmHWM``
  from ``/proc/self/status``, else ``ru_maxrss``; target: under 3 GB for receval),
  next to a child that only imports the libraries (the interpreter's floor).

Usage::

    python benchmarks/bench_loaders.py            # 25,000,000 rows (a few minutes)
    python benchmarks/bench_loaders.py --rows 200000   # smoke run
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N_USERS, N_ITEMS = 162_541, 59_047


def generate(path: Path, rows: int, seed: int = 0) -> None:
    """Write a MovieLens-like ratings CSV with ``rows`` rows (chunked, via pyarrow's CSV writer)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    popularity = 1.0 / np.arange(1, N_ITEMS + 1) ** 0.9
    popularity /= popularity.sum()
    item_ids = rng.permutation(np.arange(1, 2 * N_ITEMS))[:N_ITEMS]
    chunk = 5_000_000
    with pacsv.CSVWriter(
        str(path), pa.schema([("user", pa.int64()), ("item", pa.int64()), ("rating", pa.float64()),
                              ("timestamp", pa.int64())]),
        write_options=pacsv.WriteOptions(quoting_style="none"),
    ) as writer:  # fmt: skip
        for start in range(0, rows, chunk):
            n = min(chunk, rows - start)
            users = np.sort(rng.integers(1, N_USERS + 1, n))
            items = item_ids[rng.choice(N_ITEMS, size=n, p=popularity)]
            ratings = rng.integers(1, 11, n) / 2.0
            stamps = rng.integers(789_652_009, 1_574_327_703, n)
            writer.write_table(pa.table({"user": users, "item": items, "rating": ratings, "timestamp": stamps}))


def _run(which: str, path: str) -> float:
    start = time.perf_counter()
    if which == "pandas":
        import pandas as pd

        frame = pd.read_csv(path)
        assert len(frame)
    elif which == "receval":
        from receval.data import load

        data = load(path, "csv")
        assert data.n_ratings
    return time.perf_counter() - start


def _child(which: str, path: str) -> None:
    import pandas  # noqa: F401  (both children pay the same imports)

    import receval.data  # noqa: F401

    seconds = _run(which, path) if which != "imports" else 0.0
    print(json.dumps({"which": which, "seconds": seconds, "peak_mb": _peak_rss_mb()}))


def _peak_rss_mb() -> float:
    """This process's peak resident memory: VmHWM (Linux; reset by exec, unlike ru_maxrss), else ru_maxrss."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 1024 if sys.platform != "darwin" else peak / 2**20


def _peak(which: str, path: Path) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", which, str(path)], check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=25_000_000, help="rows of the generated CSV (default 25M)")
    parser.add_argument("--repeat", type=int, default=2, help="timings per reader; the best is reported")
    parser.add_argument("--child", nargs=2, metavar=("WHICH", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    import pandas as pd

    import receval

    with tempfile.TemporaryDirectory(prefix="receval-bench-") as tmp:
        path = Path(tmp) / "ratings.csv"
        start = time.perf_counter()
        generate(path, args.rows)
        size_mb = path.stat().st_size / 2**20
        print(f"generated {args.rows:,} rows, {size_mb:,.0f} MB in {time.perf_counter() - start:.1f} s")
        print(f"pandas {pd.__version__}, receval {receval.__version__}, numpy {np.__version__}")
        # memory first, in fresh children, while this process is still small
        floor = _peak("imports", path)
        peaks = {w: _peak(w, path) for w in ("pandas", "receval")}
        t_pandas = t_receval = float("inf")
        for _ in range(args.repeat):  # alternate, keep the best: the machine is shared and noisy
            t_pandas = min(t_pandas, _run("pandas", str(path)))
            t_receval = min(t_receval, _run("receval", str(path)))
        print(f"time   pandas.read_csv: {t_pandas:7.2f} s")
        print(f"time   receval.load   : {t_receval:7.2f} s   ratio receval/pandas = {t_receval / t_pandas:.2f}")
        print(f"peak RSS (fresh child) imports only: {floor['peak_mb']:7.0f} MB")
        for which, res in peaks.items():
            print(f"peak RSS (fresh child) {which:12s}: {res['peak_mb']:7.0f} MB  (child time {res['seconds']:.2f} s)")
        ratio = t_receval / t_pandas
        ok_time = "OK" if ratio <= 1.5 else "ABOVE TARGET"
        ok_mem = "OK" if peaks["receval"]["peak_mb"] < 3 * 1024 else "ABOVE TARGET"
        print(f"target time ratio <= 1.5: {ok_time};  target peak < 3 GB: {ok_mem}")


if __name__ == "__main__":
    main()
