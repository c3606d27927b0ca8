"""Item-kNN fit + top-10 for every user: ``receval recommend`` against implicit's ``CosineRecommender``.

Both sides are whole processes on the same ratings file, with the same neighbourhood size ``K``:

* ours: ``receval recommend --train FILE --algorithm item-knn --param k=K --k 10 --out OUT``
  (vector-cosine neighbourhoods, each rated item voting for its ``K`` neighbours, training items
  excluded);
* the anchor: a script that reads the file with pandas, builds the users x items CSR of ratings,
  fits ``implicit.nearest_neighbours.CosineRecommender(K=K)`` and writes the top-10 of every user
  (``filter_already_liked_items=True``) as a TSV, as ours does.

Sets: MovieLens-100K ``u1.base`` (``--ml100k DIR``, default ``../shared/data/ml-100k`` beside the
repository; skipped when absent) and a generated 100,000 users x 20,000 items x 5,000,000 ratings set
(``receval.data.synthetic.generate``, MNAR, seed 0), written once as Parquet into ``--work`` (a
temporary folder by default) by a child process before any timing. Runs are interleaved (ours, anchor,
ours, ...); the minimum and the median wall time of each are printed with the peak resident memory of
each process (``os.wait4``'s ``ru_maxrss``), the least CPU time of each (all threads; on a loaded
machine the steadier figure), and the ratios ours / anchor. The lists are compared (in a child process):
the mean share of each user's top-10 found in the anchor's (implicit counts the item itself among its
``K`` neighbours, so ``K + 1`` on its side gives the same neighbourhoods: that overlap is printed too).

A child's ``ru_maxrss`` is at least this process's own peak: on Linux a child started by ``vfork`` (as
``subprocess`` does) records the high-water mark of the memory it shares with its parent before ``exec``
replaces it (a parent that had generated the 5M ratings gave both sides a floor of about 0.6 GB). So this
process never generates, reads or imports pandas: the generator and the list comparison run as children,
and the parent's own peak, the floor of every figure, is printed with them.

``--expect SET=FILE`` (``ml100k`` or ``generated``): receval's lists must equal FILE byte for byte (e.g.
written by the code before a change) before anything is timed.

The machine may be shared: read the load average printed at the start and end, and repeat when quiet::

    python benchmarks/bench_knn_implicit.py --runs 5
    python benchmarks/bench_knn_implicit.py --sets ml100k --runs 7
    python benchmarks/bench_knn_implicit.py --sets generated --work /tmp/knn --expect generated=/tmp/before.tsv

The goal (issue 39): at least 1.5x faster than implicit (ours / implicit <= 0.67) with a peak no larger.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_evaluate_io import _measure  # (wall, peak resident GB, CPU) of one whole process

ML100K = Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"
RECEVAL = Path(sys.executable).with_name("receval")


def _anchor(train: str, out: str, k: int) -> None:
    """The anchor's whole job (run in its own process by ``--anchor``)."""
    import numpy as np
    import pandas as pd
    import scipy.sparse as sp
    from implicit.nearest_neighbours import CosineRecommender

    if train.endswith(".parquet"):
        frame = pd.read_parquet(train, columns=["user", "item", "rating"])
    else:  # MovieLens's u*.base: user, item, rating, timestamp, tab-separated, no header
        frame = pd.read_csv(train, sep="\t", header=None, usecols=[0, 1, 2], names=["user", "item", "rating"])
    user_ids, users = np.unique(frame["user"].to_numpy(), return_inverse=True)
    item_ids, items = np.unique(frame["item"].to_numpy(), return_inverse=True)
    ratings = frame["rating"].to_numpy(dtype=np.float32)
    user_items = sp.csr_matrix((ratings, (users, items)), shape=(len(user_ids), len(item_ids)))
    model = CosineRecommender(K=k)
    model.fit(user_items, show_progress=False)
    everyone = np.arange(len(user_ids))
    top, scores = model.recommend(everyone, user_items, N=10, filter_already_liked_items=True)
    n = top.shape[1]
    pd.DataFrame(
        {
            "user": np.repeat(user_ids, n),
            "item": item_ids[top.ravel()],
            "score": scores.ravel(),
            "rank": np.tile(np.arange(1, n + 1), len(user_ids)),
        }
    ).to_csv(out, sep="\t", index=False)


def _lists(path: Path) -> dict[object, list[object]]:
    import pandas as pd

    frame = pd.read_csv(path, sep="\t").sort_values(["user", "rank"])
    return {user: group["item"].tolist() for user, group in frame.groupby("user", sort=False)}


def _overlap(ours: Path, theirs: Path) -> None:
    """Print (run as a child by ``--overlap``) the mean share of our top-10 in theirs and the share of users
    whose lists are identical in order."""
    a, b = _lists(ours), _lists(theirs)
    shares = [len(set(a[u]) & set(b.get(u, []))) / max(len(a[u]), 1) for u in a]
    same = [a[u] == b.get(u) for u in a]
    print(f"{sum(shares) / len(shares):.4f} {sum(same) / len(same):.4f}")


def _overlaps(ours: Path, theirs: Path) -> tuple[str, str]:
    done = subprocess.run([sys.executable, __file__, "--overlap", str(ours), str(theirs)], check=True,
                          capture_output=True, text=True)  # fmt: skip
    share, same = done.stdout.split()
    return share, same


def _generate(path: Path) -> None:
    """Write the generated set to ``path`` (run as a child by ``--generate``: the parent stays small)."""
    import pandas as pd

    from receval.data.synthetic import generate

    start = time.perf_counter()
    data = generate(100_000, 20_000, 5_000_000, n_aspects=0, seed=0)
    frame = pd.DataFrame({"user": data.user_ids[data.users], "item": data.item_ids[data.items], "rating": data.ratings})
    frame.to_parquet(path, index=False)
    print(f"generated {data.n_ratings:,} ratings in {time.perf_counter() - start:.1f} s -> {path}", flush=True)


def _prepare_generated(work: Path) -> Path:
    path = work / "knn_100k_20k_5m.parquet"
    if not path.exists():
        subprocess.run([sys.executable, __file__, "--generate", str(path)], check=True)
    return path


def _own_peak() -> float:
    """This process's peak resident GB: the floor of every child's ``ru_maxrss`` (see the module docstring)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def _load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def _compare(name: str, train: Path, work: Path, k: int, runs: int, expect: Path | None) -> None:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPLBACKEND="Agg")
    slug = name.split()[0]
    ours_out, theirs_out = work / f"{slug}_receval.tsv", work / f"{slug}_implicit.tsv"
    ours = [str(RECEVAL), "recommend", "--train", str(train), "--algorithm", "item-knn", "--param", f"k={k}",
            "--k", "10", "--out", str(ours_out)]  # fmt: skip
    theirs = [sys.executable, __file__, "--anchor", str(train), str(theirs_out), str(k)]
    _measure(ours, env), _measure(theirs, env)  # one unmeasured run each: numba's cache, the page cache
    if expect is not None:
        if not filecmp.cmp(ours_out, expect, shallow=False):
            sys.exit(f"{name}: receval's lists {ours_out} differ from {expect}: not timed")
        print(f"{name}: receval's lists equal {expect} byte for byte")
    times: dict[str, list[float]] = {"receval": [], "implicit": []}
    cpus: dict[str, list[float]] = {"receval": [], "implicit": []}
    peaks: dict[str, float] = {"receval": 0.0, "implicit": 0.0}
    for _ in range(runs):
        for label, command in (("receval", ours), ("implicit", theirs)):
            wall, peak, cpu = _measure(command, env)
            times[label].append(wall)
            cpus[label].append(cpu)
            peaks[label] = max(peaks[label], peak)
    print(f"\n{name}: item-kNN K={k}, fit + top-10 for every user, {runs} interleaved runs ({_load()})")
    for label in times:
        print(
            f"  {label:9s} min {min(times[label]):6.2f} s  median {statistics.median(times[label]):6.2f} s  "
            f"CPU min {min(cpus[label]):6.2f} s  peak RSS {peaks[label]:.2f} GB"
        )
    print(f"  (this process's own peak, the floor of those figures: {_own_peak():.3f} GB)")
    ratio = min(times["receval"]) / min(times["implicit"])
    median_ratio = statistics.median(times["receval"]) / statistics.median(times["implicit"])
    cpu_ratio = min(cpus["receval"]) / min(cpus["implicit"])
    memory = peaks["receval"] / peaks["implicit"]
    verdict = "met" if ratio <= 1 / 1.5 and memory <= 1 else "MISSED"
    print(
        f"  receval / implicit: {ratio:.2f} (min), {median_ratio:.2f} (median), CPU {cpu_ratio:.2f}; memory "
        f"{memory:.2f}x -> goal (<= 0.67 and <= 1x) {verdict}"
    )
    share, same = _overlaps(ours_out, theirs_out)
    _measure([sys.executable, __file__, "--anchor", str(train), str(theirs_out), str(k + 1)], env)
    share_next, same_next = _overlaps(ours_out, theirs_out)
    print(
        f"  lists vs implicit K={k}: {share} of items shared, {same} of lists identical; "
        f"vs implicit K={k + 1}: {share_next} shared, {same_next} identical"
    )


def _expected(expect: dict[str, str], name: str) -> Path | None:
    return Path(expect[name]) if name in expect else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ml100k", type=Path, default=ML100K, help="folder holding MovieLens-100K's u1.base")
    parser.add_argument("--work", type=Path, help="folder for the generated set and the lists (default: temporary)")
    parser.add_argument("--sets", default="ml100k,generated", help="comma-separated: ml100k, generated")
    parser.add_argument("--runs", type=int, default=3, help="measured runs of each side")
    parser.add_argument("--k", type=int, default=50, help="neighbours per item")
    parser.add_argument("--expect", action="append", default=[], metavar="SET=FILE",
                        help="receval's lists of SET (ml100k, generated) must equal FILE byte for byte")  # fmt: skip
    parser.add_argument("--anchor", nargs=3, metavar=("TRAIN", "OUT", "K"), help=argparse.SUPPRESS)
    parser.add_argument("--generate", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--overlap", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.anchor:
        _anchor(args.anchor[0], args.anchor[1], int(args.anchor[2]))
        return
    if args.generate:
        _generate(args.generate)
        return
    if args.overlap:
        _overlap(*args.overlap)
        return
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = sorted(set(sets) - {"ml100k", "generated"})
    if unknown:
        parser.error(f"--sets: unknown {', '.join(unknown)}; use ml100k and/or generated")
    expect = dict(item.partition("=")[::2] for item in args.expect)
    if sorted(set(expect) - {"ml100k", "generated"}) or not all(expect.values()):
        parser.error("--expect: give SET=FILE with SET ml100k or generated")
    print(f"start: {_load()}, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench_knn_implicit_") as temporary:
        work = args.work or Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        if "ml100k" in sets:
            u1 = args.ml100k / "u1.base"
            if u1.exists():
                _compare("ML-100K u1.base", u1, work, args.k, args.runs, _expected(expect, "ml100k"))
            else:
                print(f"ML-100K skipped: {u1} is absent (--ml100k DIR)")
        if "generated" in sets:
            train = _prepare_generated(work)
            _compare("generated 100k x 20k x 5M", train, work, args.k, args.runs, _expected(expect, "generated"))
    print(f"\nend: {_load()}")


if __name__ == "__main__":
    main()
