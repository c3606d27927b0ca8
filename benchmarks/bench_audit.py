"""The leakage audit on 5M interactions against reading them: ``audit`` may cost at most 2 s more than the read.

Generates (seeded) 5,000,000 interactions (``user, item, rating, timestamp``; 100,000 users,
20,000 items, Zipf-like item popularity), splits them at random into train (80 %) and test
(20 %) Parquet files, then times, each in a fresh process (imports not timed):

* the anchor: reading both files with receval's table reader (what ``receval audit`` reads);
* ours: the same reads, then :func:`receval.stats.leakage.audit` on them.

Before timing, the audit's figures are checked against a plain pandas computation of
``train_after_test`` and ``overlap_pairs``. Each is run ``--repeat`` times (alternating), the
best kept; printed: the anchor, ours, the difference (goal ≤ 2 s), the ratio and each
process's peak memory (ru_maxrss). The load average is printed with the figures.

Usage::

    python benchmarks/bench_audit.py                  # 5M interactions
    python benchmarks/bench_audit.py --rows 200000    # smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

SCRIPT = """
import json, resource, sys, time
from receval.data.tables import read_table
from receval.stats.leakage import audit
start = time.perf_counter()
train = read_table(sys.argv[2], "train", ("user", "item"))
test = read_table(sys.argv[3], "truth", ("user", "item"))
figures = audit(train, test).as_dict() if sys.argv[1] == "audit" else {}
seconds = time.perf_counter() - start
print(json.dumps({"seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "figures": figures}))
"""


def generate(folder: Path, rows: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n_users, n_items = max(rows // 50, 10), max(rows // 250, 10)
    popularity = 1.0 / np.arange(1, n_items + 1) ** 0.8
    frame = pd.DataFrame({
        "user": rng.integers(0, n_users, rows).astype(str),
        "item": rng.choice(n_items, size=rows, p=popularity / popularity.sum()).astype(str),
        "rating": rng.integers(1, 6, rows).astype(np.float32),
        "timestamp": rng.integers(880_000_000, 1_000_000_000, rows),
    })  # fmt: skip
    test = rng.random(rows) < 0.2
    frame[~test].to_parquet(folder / "train.parquet", index=False)
    frame[test].to_parquet(folder / "test.parquet", index=False)
    return frame.assign(test=test)


def reference(frame: pd.DataFrame) -> dict[str, float]:
    """train_after_test and overlap_pairs by plain pandas (the audit's definitions)."""
    train, test = frame[~frame["test"]], frame[frame["test"]]
    first = test.groupby("user")["timestamp"].min()
    joined = train.join(first.rename("test_time"), on="user")
    after = float((joined["timestamp"] > joined["test_time"]).sum() / len(train))
    pairs = train[["user", "item"]].drop_duplicates().merge(test[["user", "item"]].drop_duplicates())
    return {"train_after_test": after, "overlap_pairs": len(pairs)}


def _run(mode: str, folder: Path) -> dict:
    cmd = [sys.executable, "-c", SCRIPT, mode, str(folder / "train.parquet"), str(folder / "test.parquet")]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        frame = generate(folder, args.rows)
        expected = reference(frame)
        got = _run("audit", folder)["figures"]
        assert abs(got["train_after_test"] - expected["train_after_test"]) < 1e-12, (got, expected)
        assert got["overlap_pairs"] == expected["overlap_pairs"], (got, expected)
        print(f"checked: train_after_test {got['train_after_test']:.4f}, overlap_pairs {got['overlap_pairs']}")
        best: dict[str, dict] = {}
        for _ in range(args.repeat):
            for mode in ("read", "audit"):
                res = _run(mode, folder)
                if mode not in best or res["seconds"] < best[mode]["seconds"]:
                    best[mode] = res
    anchor, ours = best["read"], best["audit"]
    print(f"load average: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print(f"{args.rows:,} interactions")
    print(f"anchor (read both files)   {anchor['seconds']:.2f} s, peak {anchor['peak_mb']:.0f} MB")
    print(f"ours (read + audit)        {ours['seconds']:.2f} s, peak {ours['peak_mb']:.0f} MB")
    extra = ours["seconds"] - anchor["seconds"]
    print(f"audit costs {extra:+.2f} s over the read (goal <= 2 s); ratio {ours['seconds'] / anchor['seconds']:.2f}")


if __name__ == "__main__":
    main()
