"""Tuning: every recommender tuned on validation data with the same budget, the test set read once.

The protocol of Rendle, Zhang & Koren ("On the Difficulty of Evaluating Baselines",
2019) and Dacrema, Cremonesi & Jannach ("Are We Really Making Much Progress?", RecSys
2019), as a configuration's ``[tune]`` section runs it:

1. the data set is split into train and test (the configuration's ``[split]``, or a
   given test file, ``test_path``); the test part is sealed in a :class:`HeldOut`;
2. a validation part is carved from train (``[tune.validation]``, by default the same
   kind of split as the test split), leaving the *fit* part;
3. each recommender's search space is explored by an Optuna study (TPE by default,
   random or grid search) within the budget (trials and/or seconds of trial time, the
   same for every recommender unless one sets its own): each trial fits on the fit
   part and is scored on the validation part by the objective metric; the untuned
   defaults are scored the same way, outside the budget, and are the choice when they
   beat every trial (``default_candidate = false`` leaves them out: then a small budget
   can choose worse than the defaults);
4. the chosen parameters are refitted on train (fit + validation; ``refit = "train"``
   keeps the fit part) and evaluated once on test with
   :func:`receval.evaluation.evaluate_model`, beside the untuned defaults fitted the
   same way.

Only the fit and validation parts are sent to the workers that run the trials
(through the executors of :mod:`receval.experiment.executors`); :meth:`HeldOut.open`
is called once, after the last trial.

Seeds: the tune seed seeds the splits, every trial's model and the final fits; the
sampler is re-seeded before each ask with a hash of (seed, study, index of the
trial), so a suggestion depends only on the finished trials before it. Trials are
asked in rounds of ``parallel`` per study and told in order, so local, Dask and Ray
executors make the same choices. A run killed at any moment resumes from the study
in its storage (an SQLite file ``tune.sqlite3`` in the output folder unless
``storage`` names a database): finished trials are kept, a trial that was running is
marked failed (``interrupted``) and asked again; with ``parallel = 1`` the resumed
study is the uninterrupted one, trial for trial, for TPE and random search (grid search
runs the interrupted point next and visits every point once, but Optuna's grid sampler
numbers its first points by trial number, so the points after it may come in another order).
A time budget (``seconds``) is counted in trial seconds, and is the one part that
depends on the machine.

Examples
--------
>>> import tempfile
>>> from receval.experiment.config import parse_config
>>> cfg = parse_config('''
... metrics = ["ndcg@10"]
... [datasets.toy]
... generate = { n_users = 60, n_items = 40, n_ratings = 900, seed = 1 }
... [split]
... method = "per-user"
... [tune]
... trials = 3
... [recommenders.biases]
... space = { item_damping = { float = [0.1, 100], log = true } }
... ''')
>>> report = tune_experiment(cfg, out=tempfile.mkdtemp())
>>> result = report.summary["algorithms"]["toy/biases"]
>>> result["trials"], sorted(result["best_params"])
(3, ['item_damping'])
"""

from __future__ import annotations

import contextlib
import errno
import functools
import json
import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from receval import jsontext
from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.experiment.config import ExperimentConfig, ParamRange, RecommenderSpec, TuneSpec, load_config
from receval.experiment.datasets import input_hashes
from receval.experiment.executors import make_executor
from receval.experiment.grid import expand
from receval.experiment.ids import stable_hash
from receval.experiment.protocols import build_model
from receval.experiment.store import folder_lock
from receval.experiment.validation import check_tune_parts, prepare_checked, tune_checker
from receval.progress import Progress, progress_to
from receval.validate import check_count

__all__ = ["HeldOut", "TrialJob", "TuneReport", "run_trial", "tune_experiment"]

_log = logging.getLogger(__name__)
STUDY_FILE = "tune.sqlite3"
SUMMARY_FILE = "tune.json"
TRIALS_TABLE = "tune_trials.parquet"
TEST_TABLE = "tune_test_per_user.parquet"
COMPARE_TABLE = "tune_compare.parquet"


class HeldOut:
    """The test part of a split, kept out of reach until the one final evaluation.

    Tuning never sees it: only :meth:`open` gives the interactions, and
    :func:`tune_experiment` calls it once, after every study has spent its budget.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> sealed = HeldOut(generate(5, 5, 10, seed=0))
    >>> sealed.open().n_ratings
    10
    """

    def __init__(self, test: Interactions) -> None:
        self._test = test

    def open(self) -> Interactions:
        """The test interactions, for the final evaluation.

        Returns
        -------
        Interactions
            The test part, over the training part's id space.
        """
        return self._test


@dataclass(frozen=True)
class _Parts:
    """What the trials of one data set read: the fit part and the validation part (never the test part)."""

    fit: Interactions
    validation: Interactions


@dataclass(frozen=True)
class TrialJob:
    """One trial: the model (algorithm, parameters, seed) and how it is scored on the validation part."""

    dataset: str
    algorithm: str
    params: Mapping[str, Any]
    seed: int
    metric: str
    k: int
    threshold: float
    exclude_train: bool
    cold_start: str
    preset: str = "standard"


def run_trial(job: TrialJob, parts: Mapping[str, _Parts]) -> tuple[float | None, float, str | None]:
    """Fit ``job``'s model on its data set's fit part, score it on the validation part.

    Returns
    -------
    tuple
        ``(value, seconds, error)``: the objective's value (None with the error's text
        when the model failed) and the trial's time.

    Examples
    --------
    >>> from receval.data.synthetic import generate
    >>> from receval.split import holdout
    >>> fit, val = holdout(generate(30, 20, 300, seed=0), 0.2, seed=0)
    >>> job = TrialJob("toy", "popularity", {}, 0, "ndcg@10", 10, 4.0, True, "empty")
    >>> value, seconds, error = run_trial(job, {"toy": _Parts(fit, val)})
    >>> 0 <= value <= 1, error
    (True, None)
    """
    from receval.evaluation import evaluate_model
    from receval.recommenders import clone

    t0 = time.perf_counter()
    part = parts[job.dataset]
    try:
        model = build_model(job.algorithm, job.params, {"preset": job.preset})
        model = model if "seed" in job.params else clone(model, seed=job.seed)
        result = evaluate_model(
            model,
            part.fit,
            part.validation,
            [job.metric],
            k=job.k,
            threshold=job.threshold,
            seed=job.seed,
            exclude_train=job.exclude_train,
            seed_model=False,
            cold_start=job.cold_start,  # type: ignore[arg-type]
        )
        value = float(result.summary[job.metric])
        if not np.isfinite(value):
            return None, time.perf_counter() - t0, f"the objective {job.metric} is {value}"
        return value, time.perf_counter() - t0, None
    except Exception as err:  # a failing trial is recorded in the study, the others go on
        return None, time.perf_counter() - t0, f"{type(err).__name__}: {err}"


@dataclass
class TuneReport:
    """What a tuning run produced: the JSON summary, the trials, the test values and the paired tests."""

    root: Path
    config: ExperimentConfig
    summary: dict[str, Any]
    trials: pd.DataFrame
    test_per_user: pd.DataFrame
    compare: pd.DataFrame
    importance: dict[str, dict[str, float]] = field(default_factory=dict)
    seconds: float = 0.0


# ----------------------------------------------------------------- studies
def _sampler(tune: TuneSpec, space: Sequence[ParamRange], seed: int) -> Any:
    import optuna

    if tune.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if tune.sampler == "grid":
        return _grid_class()({r.name: list(r.grid()) for r in space}, seed=seed)
    return optuna.samplers.TPESampler(seed=seed)


@functools.cache
def _grid_class() -> type:
    import optuna

    class Grid(optuna.samplers.GridSampler):
        """Optuna's grid search, its end checked by the caller (``is_exhausted``) before each ask.

        Optuna's own ``after_trial`` stops ``Study.optimize``, which trials asked and told
        one round at a time do not run in.
        """

        def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
            return None

    return Grid


def _suggest(trial: Any, space: Sequence[ParamRange]) -> dict[str, Any]:
    """The trial's parameters, drawn in the order of the space; a conditional one only when its parent matches."""
    out: dict[str, Any] = {}
    for r in space:
        if any(out.get(parent) not in allowed for parent, allowed in r.when.items()):
            continue
        if r.kind == "choices":
            out[r.name] = trial.suggest_categorical(r.name, list(r.choices))
        elif r.kind == "int":
            step = 1 if r.step is None else int(r.step)
            out[r.name] = trial.suggest_int(r.name, int(r.low or 0), int(r.high or 0), step=step, log=r.log)
        else:
            out[r.name] = trial.suggest_float(r.name, float(r.low or 0), float(r.high or 0), step=r.step, log=r.log)
    return out


@dataclass
class _Study:
    """One (data set, recommender) study and its budget.

    ``study`` is the record in the storage, the one a killed run resumes from; ``live`` is
    its copy in memory, which the sampler reads and the budget counts. Optuna's own
    ``ask``, ``suggest_*`` and ``tell`` on a database make a transaction of every
    parameter and attribute and re-read the unfinished trials at each question: about
    15 commits (each a disk sync for SQLite) and 5 reads per trial, 1.8x the time of an
    in-memory Optuna loop on ML-100K's item-kNN (benchmarks/bench_tune.py). Here the
    storage receives each trial when asked (running, its parameters in one transaction:
    a killed run finds it and asks it again) and when told (its seconds, error and
    value); the trials in the storage are those Optuna's own calls would write.
    """

    key: str
    dataset: str
    rec: RecommenderSpec
    study: Any
    trials: int | None
    seconds: float | None
    live: Any = field(init=False)
    _ids: dict[int, int] = field(init=False, default_factory=dict)  # live trial id -> the storage's
    _queued: dict[int, int] = field(init=False, default_factory=dict)  # number -> storage id of a queued point

    def __post_init__(self) -> None:
        import optuna
        from optuna.trial import TrialState

        trials = self.study.get_trials(deepcopy=False)
        self.live = optuna.create_study(directions=self.study.directions, sampler=self.study.sampler)
        self.live.add_trials(trials)  # the same numbers, states, parameters, values and attributes
        self._queued = {t.number: t._trial_id for t in trials if t.state == TrialState.WAITING}

    def counted(self) -> list[Any]:
        """The trials that spent budget: finished or failed by their model, not the interrupted ones."""
        from optuna.trial import TrialState

        return [
            t
            for t in self.live.get_trials(deepcopy=False)
            if t.state == TrialState.COMPLETE or (t.state == TrialState.FAIL and "error" in t.user_attrs)
        ]

    def left(self) -> int:
        """How many trials the budget still allows (0 when spent, or when grid search has seen every point)."""
        done = self.counted()
        grid = getattr(self.live.sampler, "is_exhausted", None)
        if grid is not None and grid(self.live):
            return 0
        if self.seconds is not None and sum(t.user_attrs.get("seconds", 0.0) for t in done) >= self.seconds:
            return 0
        if self.trials is not None:
            return max(self.trials - len(done), 0)
        return 1

    def ask(self, sampler: Any | None) -> tuple[Any, dict[str, Any]]:
        """A new trial (drawn by ``sampler``, or the study's own when None) and its parameters, stored as running."""
        from optuna.trial import TrialState

        if sampler is not None:
            self.live.sampler = sampler
        trial = self.live.ask()
        params = _suggest(trial, self.rec.space)
        frozen = self.live._storage.get_trial(trial._trial_id)
        storage = self.study._storage
        queued = self._queued.pop(frozen.number, None)
        if queued is None:  # one transaction: the trial, its parameters and the sampler's attributes
            self._ids[trial._trial_id] = storage.create_new_trial(self.study._study_id, template_trial=frozen)
            return trial, params
        # a point queued in the storage (grid search, after an interruption) runs as that trial, as in Optuna's ask
        storage.set_trial_state_values(queued, TrialState.RUNNING)
        for name, value in frozen.params.items():
            dist = frozen.distributions[name]
            storage.set_trial_param(queued, name, dist.to_internal_repr(value), dist)
        for attr, value in frozen.system_attrs.items():
            storage.set_trial_system_attr(queued, attr, value)
        self._ids[trial._trial_id] = queued
        return trial, params

    def tell(self, trial: Any, value: float | None, seconds: float, error: str | None) -> None:
        """The trial's outcome (its seconds, and its error or value), in memory and in the storage."""
        from optuna.trial import TrialState

        storage, stored = self.study._storage, self._ids.pop(trial._trial_id)
        attrs: dict[str, Any] = {"seconds": seconds} if error is None else {"seconds": seconds, "error": error}
        for attr, v in attrs.items():
            trial.set_user_attr(attr, v)
            storage.set_trial_user_attr(stored, attr, v)
        if error is not None:
            self.live.tell(trial, state=TrialState.FAIL)
        else:
            self.live.tell(trial, value)
        told = self.live._storage.get_trial(trial._trial_id)
        storage.set_trial_state_values(stored, told.state, told.values)


def _interrupted(study: Any, grid: bool) -> int:
    """Mark the trials a killed run left running as failed (``interrupted``); they are asked again.

    TPE and random search ask them again by re-seeding; grid search counts a failed
    point as visited, so its point is queued for the next trial.
    """
    from optuna.trial import TrialState

    storage = study._storage
    n = 0
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        storage.set_trial_user_attr(t._trial_id, "interrupted", True)
        storage.set_trial_state_values(t._trial_id, TrialState.FAIL)
        if grid:
            study.enqueue_trial(t.params)
        n += 1
    return n


def _study_key(cfg: ExperimentConfig, inputs: Mapping[str, Any]) -> str:
    """The studies' identity: the configuration without its budgets (a larger budget continues the same studies).

    ``inputs`` (:func:`~receval.experiment.datasets.input_hashes`) are part of it: the same
    configuration over a changed data or test file starts new studies beside the old ones
    in the storage, whose trials scored other data.
    """
    body = {k: v for k, v in cfg.effective.items() if k not in ("output", "quick")}
    if inputs:  # generated data has no file: its studies keep the names they had
        body["inputs"] = dict(inputs)
    body["tune"] = {k: v for k, v in body.get("tune", {}).items() if k not in ("trials", "seconds")}
    body["recommenders"] = {
        label: {k: v for k, v in entry.items() if k not in ("trials", "seconds")}
        for label, entry in body.get("recommenders", {}).items()
    }
    return stable_hash(body, 12)


# ----------------------------------------------------------------- data
def _split_parts(cfg: ExperimentConfig, label: str, data: Interactions, seed: int) -> tuple[Interactions, HeldOut]:
    """(train, sealed test) of one data set: its ``[split]``, or the given test file over train's id space."""
    from receval.split import split_by_name

    tune = cfg.tune
    assert tune is not None
    if tune.test_path is None:
        opts = {k: v for k, v in cfg.split.items() if k != "method"}
        train, test = split_by_name(data, cfg.split["method"], seed=seed, **opts)[0]
        return train, HeldOut(test)
    from receval.data import load
    from receval.experiment.datasets import given_test_file

    spec = cfg.datasets[label]
    path = given_test_file(cfg, label)
    assert path is not None
    if not path.exists():
        raise tune_checker(cfg).fail(("tune", "test_path"), f"test_path {str(path)!r} does not exist")
    given = load(str(path), spec.format, **dict(spec.options))
    return _joined(data, given)


def _joined(train: Interactions, test: Interactions) -> tuple[Interactions, HeldOut]:
    """``train`` and ``test`` over one id space: train's ids first, then the ids only the test file has.

    Train keeps its indices, so its lists and their tie-breaks are those of a model
    fitted on the training file alone (``receval recommend --train``).
    """
    import scipy.sparse as sp

    spaces = {}
    for what, own, other in (("user", train.user_ids, test.user_ids), ("item", train.item_ids, test.item_ids)):
        index = pd.Index(own)
        new = pd.unique(other[index.get_indexer(other) < 0])
        ids = np.concatenate([own, np.asarray(new, dtype=own.dtype)]) if len(new) else own
        spaces[what] = (ids, pd.Index(ids).get_indexer(other))
    (user_ids, test_users), (item_ids, test_items) = spaces["user"], spaces["item"]
    aspects = train.aspects
    if aspects is not None and len(item_ids) > aspects.shape[0]:  # items only the test file has: no aspect
        aspects = sp.vstack([aspects, sp.csr_matrix((len(item_ids) - aspects.shape[0], aspects.shape[1]))]).tocsr()

    def over_joint_space(users: np.ndarray, items: np.ndarray, part: Interactions, extra: dict) -> Interactions:
        return Interactions(
            users=users, items=items, ratings=part.ratings, user_ids=user_ids, item_ids=item_ids, scale=train.scale,
            timestamps=part.timestamps if train.timestamps is not None else None, aspects=aspects,
            aspect_names=train.aspect_names, extra=extra, name=part.name,
        )  # fmt: skip

    joint_train = over_joint_space(train.users, train.items, train, dict(train.extra))
    keys = [k for k in train.extra if k in test.extra]
    users, items = test_users[test.users].astype(np.int32), test_items[test.items].astype(np.int32)
    joint_test = over_joint_space(users, items, test, {k: test.extra[k] for k in keys})
    return joint_train, HeldOut(joint_test)


def _carve(cfg: ExperimentConfig, train: Interactions, seed: int) -> _Parts:
    from receval.split import split_by_name

    tune = cfg.tune
    assert tune is not None
    opts = {k: v for k, v in tune.validation.items() if k != "method"}
    fit, validation = split_by_name(train, tune.validation["method"], seed=seed, **opts)[0]
    return _Parts(fit, validation)


# ----------------------------------------------------------------- the run
def tune_experiment(
    config: str | Path | ExperimentConfig,
    *,
    out: str | Path | None = None,
    trials: int | None = None,
    executor: str = "local",
    jobs: int = 1,
    scheduler: str | None = None,
    processes: bool = True,
    quick: bool = False,
    progress: Progress | None = None,
    on_trial: Callable[[str, int, Mapping[str, Any], float | None, str | None], None] | None = None,
) -> TuneReport:
    """Tune every recommender of a configuration on validation data, then evaluate each choice once on test.

    ``trials`` replaces every recommender's budget (``receval tune --trials``).
    ``on_trial(study, number, params, value, error)`` hears of each finished trial;
    ``progress(done, total, "tune trials")`` of the count. Resumes the studies of an
    earlier run of the same configuration in the same storage.

    Returns
    -------
    TuneReport
        ``summary`` is ``{"algorithms": {"<dataset>/<label>": {"best_params", "trials",
        "validation", "test", "default_test", ...}}, ...}`` for the objective metric;
        ``trials`` one row per trial; ``test_per_user`` the tuned and default models'
        per-user test values; ``compare`` the paired tests of tuned against default.
        The same tables are written to the output folder.

    Examples
    --------
    >>> import tempfile
    >>> from receval.experiment.config import parse_config
    >>> text = 'metrics = ["ndcg@10"]\\n[datasets.toy]\\ngenerate = { n_users = 40, n_items = 30, n_ratings = 600 }\\n'
    >>> text += '[split]\\nmethod = "per-user"\\n[tune]\\nsampler = "random"\\ntrials = 2\\n'
    >>> text += '[recommenders.popularity]\\nspace = { threshold = { float = [1, 5] } }\\n'
    >>> report = tune_experiment(parse_config(text), out=tempfile.mkdtemp())
    >>> report.summary["algorithms"]["toy/popularity"]["trials"]
    2
    """
    t0 = time.perf_counter()
    try:
        import optuna
    except ImportError as err:
        raise ConfigError(f"tuning needs Optuna: pip install 'receval[tune]' ({err})") from None
    cfg = config if isinstance(config, ExperimentConfig) else load_config(config, quick=quick)
    if cfg.tune is None:
        raise ConfigError(f"{cfg.source}: no [tune] section: add one (objective metric, sampler, budget) to tune")
    tune = cfg.tune
    if trials is not None:
        check_count(trials, "--trials")
    root = Path(out) if out is not None else cfg.output_dir
    from receval.outputs import check_output_dir

    check_output_dir(root, "out=" if out is not None else f"{cfg.source}: output")
    storage = tune.storage or f"sqlite:///{(root / STUDY_FILE).resolve()}"
    with folder_lock(root, "receval tune"), _storage_failures(storage):  # one process at a time tells a study
        ex = make_executor(executor, jobs=jobs, scheduler=scheduler, processes=processes)  # its options checked now
        tasks = expand(cfg)
        prepared = prepare_checked(cfg, tasks)
        labels = {spec.key: spec.label for spec in cfg.datasets.values()}
        by_label = {labels[key]: ds.data for key, ds in prepared.items()}
        seed = tune.seed
        held: dict[str, HeldOut] = {}
        trains: dict[str, Interactions] = {}
        parts: dict[str, _Parts] = {}
        for label, data in by_label.items():
            trains[label], held[label] = _split_parts(cfg, label, data, seed)
            parts[label] = _carve(cfg, trains[label], seed)
        thresholds = {labels[t.dataset_key]: _threshold(t.options, by_label[labels[t.dataset_key]]) for t in tasks}
        opts = dict(tasks[0].options)
        for label, part in parts.items():
            check_tune_parts(cfg, label, part.fit, part.validation, thresholds[label])
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        root.mkdir(parents=True, exist_ok=True)
        inputs = input_hashes(cfg)
        prefix = _study_key(cfg, inputs)
        studies = []
        for label in by_label:
            for rec in cfg.recommenders.values():
                budget = (trials, None) if trials is not None else tune.budget(rec)
                key = f"{label}/{rec.label}"
                study = optuna.create_study(
                    study_name=f"{prefix}:{key}",
                    storage=storage,
                    direction="maximize" if tune.direction == "higher" else "minimize",
                    sampler=_sampler(tune, rec.space, seed),
                    load_if_exists=True,
                )
                if _interrupted(study, tune.sampler == "grid"):
                    _log.info("%s: trials left running by an interrupted run are asked again", key)
                studies.append(_Study(key, label, rec, study, *budget))
        total = sum(s.trials or 0 for s in studies)
        notify = progress_to(progress)

        def job_for(st: _Study, params: Mapping[str, Any]) -> TrialJob:
            return TrialJob(
                st.dataset,
                st.rec.algorithm,
                {**st.rec.params, **params},
                seed,
                tune.metric,
                int(opts["k"]),
                thresholds[st.dataset],
                bool(opts["exclude_train"]),
                str(opts["cold_start"]),
                str(opts.get("preset", "standard")),
            )

        ex.start()
        try:
            done = sum(len(s.counted()) for s in studies)
            notify(min(done, total), total, "tune trials")
            while True:
                asked: list[tuple[_Study, int, Any, dict[str, Any], TrialJob]] = []
                for st in studies:
                    for _ in range(min(st.left(), tune.parallel)):
                        index = len(st.counted()) + sum(a[0] is st for a in asked)
                        reseeded = None  # grid search takes its points in its seed's order, by trial number
                        if tune.sampler != "grid":
                            reseeded = _sampler(tune, st.rec.space, _trial_seed(seed, st.key, index))
                        trial, params = st.ask(reseeded)
                        asked.append((st, index, trial, params, job_for(st, params)))
                if not asked:
                    break
                for (st, index, trial, params, _), (value, secs, error) in zip(
                    asked, ex.call(run_trial, [a[4] for a in asked], parts), strict=True
                ):
                    st.tell(trial, value, secs, error)
                    done += 1
                    if on_trial is not None:
                        on_trial(st.key, index, params, value, error)
                    notify(min(done, max(total, done)), max(total, done), "tune trials")
            defaults: dict[str, float | None] = {}
            if tune.default_candidate:  # one fit each, outside the budget: the defaults compete on validation
                runs = ex.call(run_trial, [job_for(st, {}) for st in studies], parts)
                defaults = {st.key: value for st, (value, _, _) in zip(studies, runs, strict=True)}
        finally:
            ex.close()
        report = _finish(cfg, root, studies, trains, parts, held, thresholds, opts, defaults, inputs)
        report.seconds = time.perf_counter() - t0
        return report


@contextlib.contextmanager
def _storage_failures(storage: str) -> Iterator[None]:
    """A failing study storage (a full disk, a database gone) as one line: an OSError or a DataError naming it.

    Optuna wraps the database's error (SQLAlchemy's, SQLite's ``database or disk is
    full``) in its own; the command line shows an OSError as the path and its cause.
    """
    import optuna
    import sqlalchemy.exc

    try:
        yield
    except (optuna.exceptions.StorageInternalError, sqlalchemy.exc.SQLAlchemyError) as err:
        cause = err.__cause__ if err.__cause__ is not None else err
        text = str(getattr(cause, "orig", None) or cause).strip().splitlines()[0]
        sqlite = storage.startswith("sqlite:///")
        where = storage[len("sqlite:///") :] if sqlite else re.sub(r"//[^/@]*@", "//", storage)  # no password
        if "disk is full" in text or "No space" in text:
            raise OSError(errno.ENOSPC, text, where) from None
        raise DataError(
            f"{where}: the tuning study's storage failed ({text}); check it, or give another storage"
        ) from None


def _threshold(options: Mapping[str, Any], data: Interactions) -> float:
    return data.scale.relevance(options.get("threshold")).threshold


def _trial_seed(seed: int, key: str, index: int) -> int:
    """The sampler's seed for trial ``index`` of study ``key``: the same after a resume, on every machine."""
    return int(stable_hash([seed, key, index], 8), 16)


# ----------------------------------------------------------------- the one test evaluation
def _finish(
    cfg: ExperimentConfig,
    root: Path,
    studies: list[_Study],
    trains: Mapping[str, Interactions],
    parts: Mapping[str, _Parts],
    held: Mapping[str, HeldOut],
    thresholds: Mapping[str, float],
    opts: Mapping[str, Any],
    defaults: Mapping[str, float | None],
    inputs: Mapping[str, Any],
) -> TuneReport:
    from receval.evaluation import evaluate_model
    from receval.stats.significance import compare_systems, correct_pvalues

    tune = cfg.tune
    assert tune is not None
    tests = {label: sealed.open() for label, sealed in held.items()}  # the one reading of the test parts
    algorithms: dict[str, Any] = {}
    trial_rows: list[dict[str, Any]] = []
    per_user: list[pd.DataFrame] = []
    importance: dict[str, dict[str, float]] = {}
    metrics = list(dict.fromkeys([*cfg.metrics, tune.metric]))
    for st in studies:
        complete = [t for t in st.counted() if t.value is not None]
        trial_rows.extend(_trial_rows(st, tune.direction))
        if not complete:
            raise ConfigError(f"{st.key}: every trial failed; the first error: {st.counted()[0].user_attrs['error']}")
        best = st.study.best_trial
        default_value = defaults.get(st.key)
        keep_default = default_value is not None and (
            default_value > best.value if tune.direction == "higher" else default_value < best.value
        )
        chosen = {} if keep_default else dict(best.params)
        refit = trains[st.dataset] if tune.refit == "train+validation" else parts[st.dataset].fit
        values = {}
        param_sets = {"tuned": {**st.rec.params, **chosen}, "default": dict(st.rec.params)}
        results: dict[str, Any] = {}
        for system, params in param_sets.items():
            same = [results[other] for other in results if param_sets[other] == params]  # the defaults kept
            results[system] = (
                same[0]
                if same
                else evaluate_model(
                    build_model(st.rec.algorithm, params, opts),
                    refit,
                    tests[st.dataset],
                    metrics,
                    k=int(opts["k"]),
                    threshold=thresholds[st.dataset],
                    seed=tune.seed,
                    exclude_train=bool(opts["exclude_train"]),
                    seed_model="seed" not in params,
                    cold_start=opts["cold_start"],
                )
            )
        for system, result in results.items():
            values[system] = {m: float(result.summary[m]) for m in metrics}
            frame = result.per_user.melt(id_vars="user", var_name="metric", value_name="value")
            per_user.append(frame.assign(study=st.key, system=system))
        importance[st.key] = _importance(st, tune.seed)
        budget = {"trials": st.trials, "seconds": st.seconds}
        algorithms[st.key] = {
            "dataset": st.dataset,
            "recommender": st.rec.label,
            "algorithm": st.rec.algorithm,
            "best_params": chosen,
            "chosen": "default" if keep_default else f"trial {_position(st, best)}",
            "fixed_params": dict(st.rec.params),
            "trials": len(st.counted()),
            "failed_trials": len(st.counted()) - len(complete),
            "trial_seconds": float(sum(t.user_attrs.get("seconds", 0.0) for t in st.counted())),
            "budget": budget,
            "validation": float(default_value) if keep_default and default_value is not None else float(best.value),
            "best_trial_validation": float(best.value),
            "default_validation": None if default_value is None else float(default_value),
            "test": values["tuned"][tune.metric],
            "default_test": values["default"][tune.metric],
            "test_metrics": values["tuned"],
            "default_test_metrics": values["default"],
            "importance": importance[st.key],
        }
    tests_long = pd.concat(per_user, ignore_index=True)
    compare = _paired(tests_long, compare_systems, correct_pvalues)
    budgets = {json.dumps(a["budget"], sort_keys=True) for a in algorithms.values()}
    summary = {
        "objective": tune.metric,
        "direction": tune.direction,
        "sampler": tune.sampler,
        "refit": tune.refit,
        "seed": tune.seed,
        "default_candidate": tune.default_candidate,
        "inputs": dict(inputs),  # the SHA-256 of each file read: the studies' data
        "validation_split": dict(tune.validation),
        "test_split": {"test_path": tune.test_path} if tune.test_path else dict(cfg.split),
        "equal_budgets": len(budgets) == 1,
        "algorithms": algorithms,
    }
    trials_frame = pd.DataFrame(trial_rows)
    _write(root, summary, trials_frame, tests_long, compare)
    return TuneReport(root, cfg, summary, trials_frame, tests_long, compare, importance)


def _position(st: _Study, trial: Any) -> int:
    """``trial``'s place among the study's counted trials: its number in an uninterrupted run.

    Optuna numbers every trial it asked, the ones an interrupted run left running too, so
    after a resume its ``number`` is larger than in the run that was never stopped.
    """
    return next(i for i, t in enumerate(st.counted()) if t.number == trial.number)


def _trial_rows(st: _Study, direction: str) -> list[dict[str, Any]]:
    """One row per counted trial, with the best validation value so far."""
    rows = []
    best = None
    for i, t in enumerate(st.counted()):
        if t.value is not None:
            better = best is None or (t.value > best if direction == "higher" else t.value < best)
            best = t.value if better else best
        rows.append(
            {
                "study": st.key,
                "trial": i,
                "number": t.number,
                "state": t.state.name,
                "params": json.dumps(t.params, sort_keys=True),
                "value": np.nan if t.value is None else float(t.value),
                "best_so_far": np.nan if best is None else float(best),
                "seconds": float(t.user_attrs.get("seconds", np.nan)),
                "error": t.user_attrs.get("error"),
            }
        )
    return rows


def _importance(st: _Study, seed: int) -> dict[str, float]:
    """Optuna's fANOVA importance of each tuned parameter (empty when fewer than two trials vary them)."""
    import optuna

    try:
        evaluator = optuna.importance.FanovaImportanceEvaluator(seed=seed)
        return {k: float(v) for k, v in optuna.importance.get_param_importances(st.live, evaluator=evaluator).items()}
    except (RuntimeError, ValueError):
        return {}


def _paired(tests: pd.DataFrame, compare_systems: Any, correct_pvalues: Any) -> pd.DataFrame:
    """Tuned against default per study and metric (paired t-test over test users), Holm within each metric."""
    frames = []
    for (study, metric), part in tests.groupby(["study", "metric"], sort=False):
        res = compare_systems(part.dropna(subset=["value"]), baseline="default", correction="none")
        frames.append(res.assign(study=study, metric=metric))
    out = pd.concat(frames, ignore_index=True)
    out["pvalue_adj"] = np.nan
    for _, idx in out.groupby("metric", sort=False).groups.items():
        ok = out.loc[idx, "pvalue"].notna()
        good = idx[ok.to_numpy()]
        if len(good):
            out.loc[good, "pvalue_adj"] = correct_pvalues(out.loc[good, "pvalue"].to_numpy(), method="holm")
    return out


def _write(
    root: Path, summary: dict[str, Any], trials: pd.DataFrame, tests: pd.DataFrame, compare: pd.DataFrame
) -> None:
    """The run's tables and summary, published as one set (the study's storage is Optuna's own)."""
    from receval.atomic import publish

    with publish(root) as pub:
        trials.to_parquet(pub.path(root / TRIALS_TABLE), index=False)
        tests.assign(user=tests["user"].astype(str)).to_parquet(pub.path(root / TEST_TABLE), index=False)
        compare.to_parquet(pub.path(root / COMPARE_TABLE), index=False)
        pub.path(root / SUMMARY_FILE).write_text(jsontext.dumps(summary, indent=2, sort_keys=True), encoding="utf-8")
