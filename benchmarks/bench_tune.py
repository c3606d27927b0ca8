"""Cost of tuning item-kNN on MovieLens 100K u1, and how it grows with the trials and the data size.

The anchor is a bare Optuna loop (``study.optimize`` with TPE, an in-memory study) whose
objective fits item-kNN on the same fit part and scores nDCG@10 on the same validation
part with :func:`receval.evaluation.evaluate_model`; ours is
:func:`receval.experiment.tune.tune_experiment` on the same space and seed (SQLite study,
sealed test part, re-seeded sampler, final refit and two test evaluations). Both run in
this process, after a warm-up that compiles the kernels; the ratio is ours / anchor.
Then the growth: ours with 10, 25 and 50 trials on u1, and with 10 trials on 25 %, 50 % and
100 % of u1's users.

Skips (exit 0) when ../shared/data/ml-100k is absent.

Usage::

    python benchmarks/bench_tune.py               # 50 trials
    python benchmarks/bench_tune.py --trials 20
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

from receval.data.loaders import load
from receval.evaluation import evaluate_model
from receval.experiment.config import parse_config
from receval.experiment.tune import tune_experiment
from receval.recommenders import make
from receval.split import per_user_holdout

ML100K = Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"
_SPACE = """
k = { int = [5, 800], log = true }
shrink = { float = [0, 1000] }
similarity = { choices = ["cosine", "jaccard"] }
"""


def _config(base: Path, trials: int, test: Path) -> str:
    return f"""
metrics = ["ndcg@10"]
[datasets.u1]
path = "{base.as_posix()}"
format = "movielens-100k"
[protocol]
name = "one-shot"
k = 10
threshold = 4
[tune]
trials = {trials}
seed = 0
test_path = "{test.as_posix()}"
[tune.validation]
method = "per-user"
test_fraction = 0.2
min_train = 1
[recommenders.item-knn.space]
{_SPACE}
"""


def _ours(text: str) -> tuple[float, float, dict]:
    cpu, start = time.process_time(), time.perf_counter()
    report = tune_experiment(parse_config(text, path="<bench>"), out=tempfile.mkdtemp(prefix="bench-tune-"))
    return time.perf_counter() - start, time.process_time() - cpu, report.summary["algorithms"]["u1/item-knn"]


def _anchor(trials: int) -> tuple[float, float, float]:
    import optuna

    train = load(ML100K / "u1.base", "movielens-100k")
    fit, validation = per_user_holdout(train, 0.2, min_train=1, seed=0)

    def objective(trial: optuna.Trial) -> float:
        params = {
            "k": trial.suggest_int("k", 5, 800, log=True),
            "shrink": trial.suggest_float("shrink", 0, 1000),
            "similarity": trial.suggest_categorical("similarity", ["cosine", "jaccard"]),
        }
        res = evaluate_model(make("item-knn", **params), fit, validation, ["ndcg@10"], k=10, threshold=4, seed=0)
        return float(res.summary["ndcg@10"])

    cpu, start = time.process_time(), time.perf_counter()
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=0))
    study.optimize(objective, n_trials=trials)
    return time.perf_counter() - start, time.process_time() - cpu, float(study.best_value)


def _subset(fraction: float, folder: Path) -> tuple[Path, Path]:
    """u1.base and u1.test restricted to the first ``fraction`` of u1.base's users (by id)."""
    rows = {}
    for name in ("u1.base", "u1.test"):
        rows[name] = np.loadtxt(ML100K / name, dtype=np.int64)
    users = np.unique(rows["u1.base"][:, 0])
    keep = users[: max(1, int(len(users) * fraction))]
    out = []
    for name, table in rows.items():
        path = folder / f"{fraction:g}-{name}"
        np.savetxt(path, table[np.isin(table[:, 0], keep)], fmt="%d", delimiter="\t")
        out.append(path)
    return out[0], out[1]


def main() -> int:
    import optuna

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=50)
    args = parser.parse_args()
    if not ML100K.exists():
        print(f"skipped: MovieLens 100K not found at {ML100K}")
        return 0
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    base, test = ML100K / "u1.base", ML100K / "u1.test"
    _ours(_config(base, 2, test))  # warm-up: numba compiles (or loads) the kernels
    wall_a, cpu_a, best_a = _anchor(args.trials)
    wall_o, cpu_o, res = _ours(_config(base, args.trials, test))
    print(f"item-kNN on MovieLens 100K u1, {args.trials} TPE trials (k, shrink, similarity), nDCG@10")
    print(f"{'':28s} {'wall s':>8s} {'cpu s':>8s} {'best validation':>16s}")
    print(f"{'anchor: bare Optuna loop':28s} {wall_a:8.2f} {cpu_a:8.2f} {best_a:16.4f}")
    print(f"{'ours: tune_experiment':28s} {wall_o:8.2f} {cpu_o:8.2f} {res['validation']:16.4f}")
    print(f"ratio ours / anchor (wall): {wall_o / wall_a:.2f}; test nDCG@10 tuned {res['test']:.4f}, "
          f"default {res['default_test']:.4f}")  # fmt: skip
    print("\ngrowth with the trials (u1):")
    for n in (10, 25, 50):
        wall, cpu, _ = _ours(_config(base, n, test))
        print(f"  {n:3d} trials: wall {wall:7.2f} s, cpu {cpu:7.2f} s, {wall / n:.3f} s per trial")
    print("\ngrowth with the data (10 trials; the first share of u1.base's users):")
    with tempfile.TemporaryDirectory() as folder:
        for fraction in (0.25, 0.5, 1.0):
            sub_base, sub_test = _subset(fraction, Path(folder))
            wall, cpu, _ = _ours(_config(sub_base, 10, sub_test))
            n = int(np.loadtxt(sub_base, dtype=np.int64).shape[0])
            print(f"  {fraction:4.0%} of the users ({n} ratings): wall {wall:7.2f} s, cpu {cpu:7.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
