"""Whole-process commands against their anchors, each measured in the same run.

1. ``receval predict`` item-kNN Pearson k=50 on MovieLens 100K ``u1.base``/``u1.test``
   with ``means=false`` (scikit-surprise's KNNBasic rule: the predictions are the same)
   against a scikit-surprise script (``KNNBasic(k=50, pearson, item-based)``: read both
   files, fit, predict every test pair, write the predictions) — target ≥ 5x. receval runs its products and
   predictions on every core (``NUMBA_NUM_THREADS`` caps them), surprise on one: the CPU ratio is printed too.
2. ``receval evaluate`` of TREC files (30,000 users x top-100, five metrics; written
   by ``bench_evaluate_io.generate``) against a pytrec_eval script (its own TREC
   readers ``parse_qrel``/``parse_run``, ``RelevanceEvaluator``, means) — target ≥ 3x.
   ranx ``from_file`` on the same files is ``bench_evaluate_io.py --trec``.
3. The same ``receval evaluate`` against its floor: a process that imports numpy and pyarrow
   and reads both TREC files with ``pyarrow.csv`` (what no Python evaluator of these files can
   go below) — target ≤ 1.5x its time (issue 39).

Every command is a new process (interpreter, imports, reading, work, writing); each
runs once untimed (bytecode and numba caches warm, for both sides), then ``--repeat``
times in turn, and the median wall time is kept; CPU seconds (user + sys of the child)
are printed too, since on a shared machine wall time inflates with the load (printed).

Usage::

    python benchmarks/bench_cli.py                 # both
    python benchmarks/bench_cli.py --only predict --repeat 5
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ML100K = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "ml-100k"
RECEVAL = str(Path(sys.executable).with_name("receval"))
# bytecode written, as an installed package has it (PYTHONDONTWRITEBYTECODE would recompile receval every run)
ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
ENV["OPENBLAS_NUM_THREADS"] = "1"

SURPRISE_SCRIPT = """
import sys
import pandas as pd
import surprise
train = pd.read_csv(sys.argv[1], sep="\\t")
test = pd.read_csv(sys.argv[2], sep="\\t")
reader = surprise.Reader(rating_scale=(1, 5))
trainset = surprise.Dataset.load_from_df(train[["user", "item", "rating"]], reader).build_full_trainset()
algo = surprise.KNNBasic(k=50, sim_options={"name": "pearson", "user_based": False}, verbose=False).fit(trainset)
testset = list(test[["user", "item", "rating"]].itertuples(index=False))
rows = [(p.uid, p.iid, p.r_ui, p.est) for p in algo.test(testset)]
pd.DataFrame(rows, columns=["user", "item", "rating", "prediction"]).to_csv(sys.argv[3], sep="\\t", index=False)
"""

PYTREC_SCRIPT = """
import json, sys
import pytrec_eval
with open(sys.argv[1]) as fh:
    qrels = pytrec_eval.parse_qrel(fh)
with open(sys.argv[2]) as fh:
    run = pytrec_eval.parse_run(fh)
measures = {"ndcg_cut.10", "P.10", "recall.100", "recip_rank", "map_cut.100"}
per_query = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
keys = ["ndcg_cut_10", "P_10", "recall_100", "map_cut_100", "recip_rank"]
print(json.dumps({k: sum(q[k] for q in per_query.values()) / len(per_query) for k in keys}))
"""


FLOOR_SCRIPT = """
import sys
import numpy
import pyarrow.csv as csv
options = csv.ReadOptions(autogenerate_column_names=True), csv.ParseOptions(delimiter=" ")
tables = [csv.read_csv(path, read_options=options[0], parse_options=options[1]) for path in sys.argv[1:]]
print(sum(t.num_rows for t in tables))
"""


def _run(cmd: list[str]) -> tuple[float, float, float, str]:
    """Wall and CPU seconds (user + sys of the child and its threads), peak resident GB (``os.wait4``'s
    ``ru_maxrss``) of one process, and its stdout."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:  # files: a full pipe cannot stall it
        start = time.perf_counter()
        process = subprocess.Popen(cmd, env=ENV, stdout=out, stderr=err)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = 0
        if status != 0:
            err.seek(0)
            sys.exit(f"{' '.join(cmd[:2])} failed: {err.read().decode()[-2000:]}")
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1e6, out.read().decode()


def _compare(
    title: str, target: str, ours: list[str], anchor: list[str], repeat: int, *, floor: bool = False
) -> list[str]:
    """Time both commands in turn; print their medians and ratios and return their last outputs.

    The ratio is the anchor's time over receval's, or receval's over the anchor's when the anchor is
    a ``floor`` (a lower bound: the target is a ratio at most). Peak memory is each command's largest; a
    child's peak includes this process's size when it starts the child, printed as the lower bound.
    """
    _run(ours), _run(anchor)  # warm-up: bytecode, numba caches, file cache
    times: dict[str, list[tuple[float, float, float]]] = {"ours": [], "anchor": []}
    outputs = {}
    for _ in range(repeat):
        for name, cmd in (("ours", ours), ("anchor", anchor)):
            wall, cpu, peak, outputs[name] = _run(cmd)
            times[name].append((wall, cpu, peak))
    med = {
        name: (statistics.median(w for w, _, _ in v), statistics.median(c for _, c, _ in v), max(p for *_, p in v))
        for name, v in times.items()
    }
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"[{title}]  (load average {os.getloadavg()[0]:.2f})")
    print(f"    receval: {med['ours'][0]:6.2f} s wall, {med['ours'][1]:6.2f} s CPU, {med['ours'][2]:5.2f} GB peak   "
          + " ".join(ours[:2]) + " ...")  # fmt: skip
    print(f"    anchor:  {med['anchor'][0]:6.2f} s wall, {med['anchor'][1]:6.2f} s CPU, {med['anchor'][2]:5.2f} GB "
          f"peak   (this process: {own:.2f} GB, a lower bound of each peak)")  # fmt: skip
    if floor:
        print(f"    ratio receval / floor: {med['ours'][0] / med['anchor'][0]:.2f}x wall, "
              f"{med['ours'][1] / med['anchor'][1]:.2f}x CPU (target {target})")  # fmt: skip
    else:
        print(f"    ratio anchor / receval: {med['anchor'][0] / med['ours'][0]:.1f}x wall, "
              f"{med['anchor'][1] / med['ours'][1]:.1f}x CPU (target {target})")  # fmt: skip
    return [outputs["ours"], outputs["anchor"]]


def bench_predict(repeat: int) -> None:
    if not (ML100K / "u1.base").exists():
        print(f"[predict] skipped: {ML100K}/u1.base not found")
        return
    import pandas as pd

    with tempfile.TemporaryDirectory() as tmp:
        for name in ("u1.base", "u1.test"):  # both sides read the same TSV files with a header
            frame = pd.read_csv(ML100K / name, sep="\t", names=["user", "item", "rating", "timestamp"])
            frame.to_csv(f"{tmp}/{name}.tsv", sep="\t", index=False)
        ours = [RECEVAL, "predict", "--train", f"{tmp}/u1.base.tsv", "--test", f"{tmp}/u1.test.tsv",
                "--algorithm", "item-knn", "--param", "k=50", "--param", "similarity=pearson", "--param", "means=false",
                "--unknown", "global-mean", "--out", f"{tmp}/ours.tsv"]  # fmt: skip
        anchor = [sys.executable, "-c", SURPRISE_SCRIPT, f"{tmp}/u1.base.tsv", f"{tmp}/u1.test.tsv",
                  f"{tmp}/surprise.tsv"]  # fmt: skip
        _compare("receval predict item-kNN pearson k=50, ML-100K u1 vs scikit-surprise KNNBasic", ">= 5x",
                 ours, anchor, repeat)  # fmt: skip
        a, b = pd.read_csv(f"{tmp}/ours.tsv", sep="\t"), pd.read_csv(f"{tmp}/surprise.tsv", sep="\t")
        rmse = {
            name: float(((f["prediction"] - f["rating"]) ** 2).mean() ** 0.5)
            for name, f in (("receval", a), ("surprise", b))
        }
        print(f"    RMSE receval {rmse['receval']:.4f}, surprise {rmse['surprise']:.4f} ({len(a)} vs {len(b)} rows)")
        both = a.merge(b, on=["user", "item"], suffixes=("", "_surprise"))
        gap = float((both["prediction"] - both["prediction_surprise"]).abs().max())
        print(f"    largest |receval - surprise| over {len(both)} common predictions: {gap:.3g}")


def bench_trec(repeat: int, users: int) -> None:
    metrics = "ndcg@10,precision@10,recall@100,map@100,mrr"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # the same seeded files as the TSV/ranx benchmark, written by a child: this process stays small, and a
        # child's peak memory (which counts this process's size when it starts) stays the child's own
        subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
                        "from bench_evaluate_io import generate; generate(Path(sys.argv[2]), int(sys.argv[3]))",
                        str(Path(__file__).resolve().parent), str(folder), str(users)], check=True)  # fmt: skip
        ours = [RECEVAL, "evaluate", "--truth", str(folder / "truth.qrels"), "--recs", str(folder / "run.trec"),
                "--metrics", metrics, "--empty-users", "zero", "--json"]  # fmt: skip
        anchor = [sys.executable, "-c", PYTREC_SCRIPT, str(folder / "truth.qrels"), str(folder / "run.trec")]
        out_ours, out_anchor = _compare(f"receval evaluate TREC files, {users:,} users x top-100 vs pytrec_eval",
                                        ">= 3x", ours, anchor, repeat)  # fmt: skip
        values = json.loads(out_ours.strip().splitlines()[-1])
        print("    receval   " + json.dumps({k: round(v, 6) for k, v in values.items() if k != "conventions"}))
        print("    pytrec    " + json.dumps({k: round(v, 6) for k, v in json.loads(out_anchor).items()}))
        floor = [sys.executable, "-c", FLOOR_SCRIPT, str(folder / "truth.qrels"), str(folder / "run.trec")]
        _, rows = _compare(f"receval evaluate TREC files, {users:,} users x top-100 vs reading them (numpy + "
                           "pyarrow.csv)", "<= 1.5x", ours, floor, repeat, floor=True)  # fmt: skip
        scored = values["conventions"]["users_evaluated"]
        print(f"    the floor read {int(rows):,} lines; receval scored {scored:,} users")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--users", type=int, default=30_000)
    parser.add_argument("--only", choices=["predict", "trec"])
    args = parser.parse_args()
    if args.only in (None, "predict"):
        bench_predict(args.repeat)
    if args.only in (None, "trec"):
        bench_trec(args.repeat, args.users)


if __name__ == "__main__":
    main()
