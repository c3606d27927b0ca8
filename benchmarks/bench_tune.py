"""Cost of tuning item-kNN on MovieLens 100K u1 against a bare Optuna loop doing the same trials.

The anchor is a bare Optuna loop (ask and tell on an in-memory study, TPE) whose objective
fits item-kNN on the fit part and scores nDCG@10 on the validation part with
:func:`receval.evaluation.evaluate_model`. It does the same trials as ours: the same parts
(u1.base over the id space it shares with u1.test, a per-user 20 % validation part, seed 0)
and the same sampler seeds (TPE re-seeded before each trial by the rule of
:mod:`receval.experiment.tune`), so it draws the same parameters and scores the same values,
which is checked before any figure is printed. Ours is
:func:`receval.experiment.tune.tune_experiment` on the same space and seed: a SQLite study
in the output folder, the sealed test part, the untuned defaults scored on validation, the
final refit and test evaluations of the tuned and the default models, fANOVA importances
and the written tables; the whole process (``receval tune --json``) also writes the report
``tune.html``. These are work a user asks for and the anchor does not do: ours is printed
whole and in three parts (set-up: reading, splitting, checking, opening the study; the trial
loop, the anchor's work; the end: defaults, refit, test evaluations, importances, tables).

First whole processes, interleaved ``--runs`` times after one warm-up: ``receval tune
CONFIG --json`` against ``python`` running the bare loop (this file with ``--bare``, which
imports no part of :mod:`receval.experiment`); wall, CPU (user + system) and peak resident
memory of each (``os.wait4``; measured while this process is small, since a child's peak
counts its parent's at the fork). Then both in this process, after a warm-up that compiles
the kernels, interleaved ``--runs`` times. Figures are medians. Then the growth of ours with
the trials and the data size (``--growth``).

Skips (exit 0) when ../shared/data/ml-100k is absent. The machine may be shared: the load
average is printed at the start and the end; CPU time is the steadier figure.

Measured (50 trials, medians of 2 runs, load 5.0-7.1; CPU is the figure to trust at that load),
ours / anchor before and after the in-memory study of :class:`receval.experiment.tune._Study`:
whole processes wall 1.76 -> 1.34, CPU 1.36 -> 1.29; in this process wall 1.55 -> 1.03, CPU
1.19 -> 1.12; the trial loop alone (wall) 1.49 -> 0.97. The rest of the whole process's CPU
(4.5 s against 15.3 s) is fixed: imports (receval.experiment pulls scipy.stats through
experiment.validation, SQLAlchemy and Alembic, scikit-learn for fANOVA, matplotlib for
tune.html), the study's creation (0.4 s), the defaults' trial, the test evaluations.

Usage::

    python benchmarks/bench_tune.py                  # 50 trials, 3 runs
    python benchmarks/bench_tune.py --trials 20 --runs 5 --growth
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np

ML100K = Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"
STUDY = "u1/item-knn"
_SPACE = """
k = { int = [5, 800], log = true }
shrink = { float = [0, 1000] }
similarity = { choices = ["cosine", "jaccard"] }
"""


def _joint_train(train: Any, test: Any) -> Any:
    """``train`` over the id space tune gives a ``test_path`` run: train's ids, then those only the test file has.

    The training part of :func:`receval.experiment.tune._joined`, written out here so that the
    bare loop imports no part of :mod:`receval.experiment` (whose import costs a second).
    """
    import dataclasses

    import scipy.sparse as sp

    ids = {}
    for what in ("user_ids", "item_ids"):
        own, other = getattr(train, what), getattr(test, what)
        new = other[~np.isin(other, own)]
        ids[what] = np.concatenate([own, new.astype(own.dtype)]) if len(new) else own
    aspects = train.aspects
    if aspects is not None and len(ids["item_ids"]) > aspects.shape[0]:  # items only the test file has
        padding = sp.csr_matrix((len(ids["item_ids"]) - aspects.shape[0], aspects.shape[1]))
        aspects = sp.vstack([aspects, padding]).tocsr()
    return dataclasses.replace(train, aspects=aspects, **ids)


def _bare(base: Path, test: Path, seeds: list[int]) -> tuple[float, list[tuple[dict, float]]]:
    """The anchor: a bare Optuna loop doing tune's trials; its loop's seconds and its (parameters, value) pairs.

    The parts are tune's (:func:`_joint_train`, then a per-user 20 % validation part); the
    sampler is re-seeded before trial ``i`` with ``seeds[i]``, tune's seed for it
    (:func:`receval.experiment.tune._trial_seed`), so the trials are tune's.
    """
    import optuna

    from receval.data.loaders import load
    from receval.evaluation import evaluate_model
    from receval.recommenders import make
    from receval.split import per_user_holdout

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    train = _joint_train(load(base, "movielens-100k"), load(test, "movielens-100k"))
    fit, validation = per_user_holdout(train, 0.2, min_train=1, seed=0)
    started = time.perf_counter()
    study = optuna.create_study(direction="maximize")
    for seed in seeds:
        study.sampler = optuna.samplers.TPESampler(seed=seed)
        trial = study.ask()
        params = {
            "k": trial.suggest_int("k", 5, 800, log=True),
            "shrink": trial.suggest_float("shrink", 0, 1000),
            "similarity": trial.suggest_categorical("similarity", ["cosine", "jaccard"]),
        }
        res = evaluate_model(make("item-knn", **params), fit, validation, ["ndcg@10"], k=10, threshold=4, seed=0)
        study.tell(trial, float(res.summary["ndcg@10"]))
    return time.perf_counter() - started, [(t.params, float(t.value)) for t in study.trials]


def _seeds(trials: int) -> list[int]:
    from receval.experiment.tune import _trial_seed

    return [_trial_seed(0, STUDY, index) for index in range(trials)]


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


def _ours(text: str) -> dict:
    """tune_experiment on ``text``: wall and CPU time, whole and in parts (set-up, trial loop, end), and its trials."""
    from receval.experiment.config import parse_config
    from receval.experiment.tune import tune_experiment

    told: list[float] = []
    with tempfile.TemporaryDirectory(prefix="bench-tune-") as out:
        cpu, start = time.process_time(), time.perf_counter()
        report = tune_experiment(
            parse_config(text, path="<bench>"), out=out, on_trial=lambda *_: told.append(time.perf_counter())
        )
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    rows = report.trials[report.trials["study"] == STUDY]
    loop_start = told[0] - float(rows["seconds"].iloc[0])  # the first trial's own time before it was told
    return {
        "wall": wall,
        "cpu": cpu,
        "setup": loop_start - start,
        "loop": told[-1] - loop_start,
        "end": start + wall - told[-1],
        "trials": [(json.loads(p), v) for p, v in zip(rows["params"], rows["value"], strict=True)],
        "result": report.summary["algorithms"][STUDY],
    }


def _anchor(trials: int) -> dict:
    seeds = _seeds(trials)
    cpu, start = time.process_time(), time.perf_counter()
    loop, done = _bare(ML100K / "u1.base", ML100K / "u1.test", seeds)
    return {"wall": time.perf_counter() - start, "cpu": time.process_time() - cpu, "loop": loop, "trials": done}


def _same(ours: list, theirs: list) -> None:
    """The anchor's trials are ours, parameter for parameter and value for value, or the benchmark stops."""
    if [(p, float(v)) for p, v in ours] != [(p, float(v)) for p, v in theirs]:
        sys.exit(f"the anchor's trials differ from tune's:\n  ours   {ours[:3]}...\n  anchor {theirs[:3]}...")


def _process(command: list[str], out: Path | None = None) -> tuple[float, float, float, str]:
    """Wall s, CPU s (user + system) and peak RSS (MB) of one process, and its standard output."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as stdout:
        process = subprocess.Popen(command, stdout=stdout, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = 0
        stdout.seek(0)
        text = stdout.read().decode()
    if status != 0:
        assert process.stderr is not None
        sys.exit(f"{command} failed: {process.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, text


def _whole_processes(trials: int, runs: int, folder: Path) -> None:
    import pandas

    base, test = ML100K / "u1.base", ML100K / "u1.test"
    config, seeds = folder / "tune.toml", ",".join(map(str, _seeds(trials)))
    config.write_text(_config(base, trials, test), encoding="utf-8")
    commands = {
        "anchor: python (bare loop)": [sys.executable, __file__, "--bare", str(base), str(test), seeds],
        "ours: receval tune --json": [sys.executable, "-m", "receval", "tune", str(config), "--json", "--out"],
    }
    _process(commands["ours: receval tune --json"] + [str(folder / "warm-up"), "--trials", "2"])  # kernels cached
    seen: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for run in range(runs):
        outputs = {}
        for name, command in commands.items():
            extra = [str(folder / f"out-{run}")] if name.startswith("ours") else []
            wall, cpu, peak, outputs[name] = _process(command + extra)
            seen[name].append((wall, cpu, peak))
        table = pandas.read_parquet(folder / f"out-{run}" / "tune_trials.parquet")
        bare = json.loads(outputs["anchor: python (bare loop)"])
        _same(list(zip(map(json.loads, table["params"]), table["value"], strict=True)), bare)
    print(f"item-kNN on MovieLens 100K u1, {trials} TPE trials (k, shrink, similarity), nDCG@10")
    print(f"whole processes, {trials} trials, the same trials checked; medians of {runs} interleaved runs:")
    print(f"{'':28s} {'wall s':>8s} {'cpu s':>8s} {'peak MB':>8s}")
    medians = {name: [statistics.median(f[i] for f in seen[name]) for i in range(3)] for name in commands}
    for name, (wall, cpu, peak) in medians.items():
        print(f"{name:28s} {wall:8.2f} {cpu:8.2f} {peak:8.0f}")
    (wa, ca, _), (wo, co, _) = medians.values()
    print(f"ratio ours / anchor: wall {wo / wa:.2f}, cpu {co / ca:.2f}")


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


def _growth(base: Path, test: Path) -> None:
    print("\ngrowth with the trials (u1):")
    for n in (10, 25, 50):
        res = _ours(_config(base, n, test))
        print(f"  {n:3d} trials: wall {res['wall']:7.2f} s, cpu {res['cpu']:7.2f} s, {res['wall'] / n:.3f} s per trial")
    print("\ngrowth with the data (10 trials; the first share of u1.base's users):")
    with tempfile.TemporaryDirectory() as folder:
        for fraction in (0.25, 0.5, 1.0):
            sub_base, sub_test = _subset(fraction, Path(folder))
            res = _ours(_config(sub_base, 10, sub_test))
            n = int(np.loadtxt(sub_base, dtype=np.int64).shape[0])
            print(f"  {fraction:4.0%} of the users ({n} ratings): wall {res['wall']:7.2f} s, cpu {res['cpu']:7.2f} s")


def main() -> int:
    import optuna

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3, help="interleaved runs of each, in process and as processes")
    parser.add_argument("--growth", action="store_true", help="also time ours at 10, 25, 50 trials and 3 data sizes")
    parser.add_argument("--bare", nargs=3, metavar=("BASE", "TEST", "SEEDS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:  # the anchor as a process of its own: its trials as JSON
        print(json.dumps(_bare(Path(args.bare[0]), Path(args.bare[1]), [int(x) for x in args.bare[2].split(",")])[1]))
        return 0
    if not ML100K.exists():
        print(f"skipped: MovieLens 100K not found at {ML100K}")
        return 0
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    base, test = ML100K / "u1.base", ML100K / "u1.test"
    print(f"load average at the start: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    with tempfile.TemporaryDirectory() as folder:  # first: a child's peak RSS counts this process's at the fork
        _whole_processes(args.trials, args.runs, Path(folder))
    _ours(_config(base, 2, test))  # warm-up: numba compiles (or loads) the kernels
    ours, anchor = [], []
    for _ in range(args.runs):
        anchor.append(_anchor(args.trials))
        ours.append(_ours(_config(base, args.trials, test)))
        _same(ours[-1]["trials"], anchor[-1]["trials"])

    def med(runs: list[dict], key: str) -> float:
        return statistics.median(r[key] for r in runs)

    res = ours[0]["result"]
    print(f"\nin this process, {args.trials} trials, the same trials checked; medians of {args.runs} interleaved runs:")
    print(f"{'':52s} {'wall s':>8s} {'cpu s':>8s}")
    print(f"{'anchor: bare Optuna loop (reading, splitting, trials)':52s} {med(anchor, 'wall'):8.2f} "
          f"{med(anchor, 'cpu'):8.2f}")  # fmt: skip
    print(f"{'  of which the trials':52s} {med(anchor, 'loop'):8.2f}")
    print(f"{'ours: tune_experiment':52s} {med(ours, 'wall'):8.2f} {med(ours, 'cpu'):8.2f}")
    for part, what in (("setup", "reading, splitting, checks, opening the study"), ("loop", "the trials"),
                       ("end", "defaults, refit, test, importance, writing")):  # fmt: skip
        print(f"{'  ' + what:52s} {med(ours, part):8.2f}")
    print(f"ratio ours / anchor: wall {med(ours, 'wall') / med(anchor, 'wall'):.2f}, "
          f"cpu {med(ours, 'cpu') / med(anchor, 'cpu'):.2f}; trial loop alone (wall) "
          f"{med(ours, 'loop') / med(anchor, 'loop'):.2f}")  # fmt: skip
    print(f"validation {res['validation']:.4f} ({res['chosen']}), test nDCG@10 tuned {res['test']:.4f}, "
          f"default {res['default_test']:.4f}")  # fmt: skip
    if args.growth:
        _growth(base, test)
    print(f"load average at the end: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
