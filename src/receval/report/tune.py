"""The tuning as evidence: best-so-far curves, chosen parameters, importance, the gap and the defaults.

:func:`results_table` is the table a reader compares systems by: per data set and
recommender the untuned default and the tuned model on test for every metric, the
budget spent, the chosen parameters, the validation value, the validation-vs-test gap
and the paired test of tuned against default (Holm-corrected within each metric, as
:mod:`receval.stats.significance` computes it). :func:`best_so_far_figure` draws the
best validation value against the trial count per recommender; :func:`write_tune_report`
writes both, the parameter importances and the protocol's settings as one HTML page.

Examples
--------
>>> summary = {"objective": "ndcg@10", "direction": "higher", "equal_budgets": True, "algorithms": {
...     "toy/pop": {"dataset": "toy", "recommender": "pop", "best_params": {"threshold": 3.5}, "trials": 2,
...                 "budget": {"trials": 2, "seconds": None}, "validation": 0.3, "test": 0.25,
...                 "default_test": 0.2, "test_metrics": {"ndcg@10": 0.25}, "default_test_metrics": {"ndcg@10": 0.2},
...                 "trial_seconds": 0.5, "importance": {}}}}
>>> compare = pd.DataFrame({"study": ["toy/pop"], "metric": ["ndcg@10"], "pvalue": [0.01], "pvalue_adj": [0.01]})
>>> results_table(summary, compare)[["recommender", "ndcg@10 default", "ndcg@10 tuned", "gap"]].to_dict("records")
[{'recommender': 'pop', 'ndcg@10 default': 0.2, 'ndcg@10 tuned': 0.25, 'gap': 0.04999999999999999}]
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from receval.atomic import publish, write_text
from receval.errors import DataError
from receval.report.html import Report, _frame_html
from receval.report.style import figure, series_style

__all__ = ["best_so_far_figure", "is_tune_folder", "report_tune_folder", "results_table", "write_tune_report"]


def results_table(summary: Mapping[str, Any], compare: pd.DataFrame) -> pd.DataFrame:
    """Default beside tuned on test for every metric, with the budget, the chosen parameters and the paired tests.

    Returns
    -------
    pandas.DataFrame
        One row per data set and recommender: ``<metric> default``, ``<metric> tuned`` and
        ``<metric> p (Holm)`` for every metric, ``trials``, ``trial seconds``,
        ``chosen parameters`` (JSON, or ``the defaults`` when the untuned defaults beat every
        trial on validation), ``validation`` (the choice's objective), ``default validation``
        (the defaults', when they competed) and ``gap`` (validation minus test, for the objective).

    Examples
    --------
    >>> s = {"objective": "recall@10", "algorithms": {"d/knn": {"dataset": "d", "recommender": "knn",
    ...      "best_params": {"k": 5}, "trials": 1, "validation": 0.5, "test": 0.4, "trial_seconds": 1.0,
    ...      "test_metrics": {"recall@10": 0.4}, "default_test_metrics": {"recall@10": 0.3}}}}
    >>> results_table(s, pd.DataFrame(columns=["study", "metric", "pvalue_adj"]))["chosen parameters"].tolist()
    ['{"k": 5}']
    """
    rows = []
    for key, res in summary["algorithms"].items():
        row: dict[str, Any] = {"dataset": res["dataset"], "recommender": res["recommender"]}
        for metric, tuned in res["test_metrics"].items():
            row[f"{metric} default"] = res["default_test_metrics"][metric]
            row[f"{metric} tuned"] = tuned
            match = compare[(compare["study"] == key) & (compare["metric"] == metric)]
            row[f"{metric} p (Holm)"] = float(match["pvalue_adj"].iloc[0]) if len(match) else float("nan")
        row |= {
            "trials": res["trials"],
            "trial seconds": res["trial_seconds"],
            "chosen parameters": "the defaults"
            if res.get("chosen") == "default"
            else json.dumps(res["best_params"], sort_keys=True),
            "validation": res["validation"],
            "default validation": res.get("default_validation"),
            "gap": res["validation"] - res["test"],
        }
        rows.append(row)
    return pd.DataFrame(rows)


def best_so_far_figure(trials: pd.DataFrame, objective: str) -> Any:
    """The best validation value after each trial, one line per study (data set / recommender).

    Returns
    -------
    matplotlib.figure.Figure
        One panel; the x axis counts the trials that spent budget.

    Examples
    --------
    >>> t = pd.DataFrame({"study": ["d/a", "d/a", "d/b"], "trial": [0, 1, 0], "best_so_far": [0.1, 0.2, 0.15]})
    >>> fig = best_so_far_figure(t, "ndcg@10")
    >>> [line.get_label() for line in fig.axes[0].lines]
    ['d/a', 'd/b']
    """
    fig, axes = figure(width=6.0, height=3.6)
    ax = axes[0, 0]
    for i, (study, part) in enumerate(trials.groupby("study", sort=False)):
        style = series_style(i)
        ax.plot(part["trial"] + 1, part["best_so_far"], color=style["color"], marker=style["marker"],
                markersize=3, label=str(study))  # fmt: skip
    ax.set_xlabel("trials")
    ax.set_ylabel(f"best validation {objective}")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False)
    return fig


def write_tune_report(
    summary: Mapping[str, Any], trials: pd.DataFrame, compare: pd.DataFrame, path: str | Path
) -> Path:
    """One HTML page: the protocol's settings, the results table, the best-so-far curves and the importances.

    Returns
    -------
    pathlib.Path
        ``path``.

    Examples
    --------
    >>> import tempfile
    >>> s = {"objective": "recall@10", "direction": "higher", "equal_budgets": True, "algorithms": {"d/knn": {
    ...      "dataset": "d", "recommender": "knn", "best_params": {"k": 5}, "trials": 1, "validation": 0.5,
    ...      "test": 0.4, "trial_seconds": 1.0, "budget": {"trials": 1, "seconds": None}, "importance": {},
    ...      "test_metrics": {"recall@10": 0.4}, "default_test_metrics": {"recall@10": 0.3}}}}
    >>> t = pd.DataFrame({"study": ["d/knn"], "trial": [0], "best_so_far": [0.5]})
    >>> page = write_tune_report(s, t, pd.DataFrame(columns=["study", "metric", "pvalue_adj"]),
    ...                          Path(tempfile.mkdtemp()) / "tune.html")
    >>> "Default and tuned on test" in page.read_text(encoding="utf-8")
    True
    """
    out = Path(path)
    objective = summary["objective"]
    rep = Report(title=f"Tuning on validation data, {objective}")
    rep.heading("Protocol")
    budgets = {key: res["budget"] for key, res in summary["algorithms"].items()}
    verb = "maximising" if summary.get("direction") == "higher" else "minimising"
    rep.text(
        f"Each recommender was tuned on a validation part carved from the training split "
        f"({json.dumps(summary.get('validation_split', {}), sort_keys=True)}) by Optuna's {summary.get('sampler')} "
        f"sampler, {verb} {objective}; "
        f"the chosen parameters were refitted on {summary.get('refit')} and evaluated once on the test split "
        f"({json.dumps(summary.get('test_split', {}), sort_keys=True)}), beside the untuned defaults fitted the same "
        f"way (seed {summary.get('seed')})."
    )
    if summary.get("default_candidate", False):
        kept = [key for key, res in summary["algorithms"].items() if res.get("chosen") == "default"]
        rep.text(
            "The untuned defaults competed on validation too (one fit each, outside the budget) and are the choice "
            "where they beat every trial" + (f": {', '.join(kept)}." if kept else "; no recommender kept them.")
        )
    if summary.get("equal_budgets", True):
        rep.text(f"Every recommender had the same budget: {json.dumps(next(iter(budgets.values()), {}))}.")
    else:
        rep.notice("the budgets differ between recommenders: " + json.dumps(budgets, sort_keys=True))
        rep.text("The budgets are not equal: " + json.dumps(budgets, sort_keys=True))
    rep.heading("Default and tuned on test")
    rep.raw(_frame_html(results_table(summary, compare), "tune-results"))
    rep.text("p (Holm): paired t-test of tuned against default over the test users, Holm-corrected within each metric.")
    rep.heading("Best validation value so far")
    rep.figure(
        "best-so-far", f"best validation {objective} after each trial", lambda: best_so_far_figure(trials, objective)
    )
    rep.heading("Parameter importance (Optuna's fANOVA)")
    imp = [
        {"study": key, "parameter": p, "importance": v}
        for key, res in summary["algorithms"].items()
        for p, v in res.get("importance", {}).items()
    ]
    rep.raw(_frame_html(pd.DataFrame(imp, columns=["study", "parameter", "importance"]), "tune-importance"))
    with publish(out.parent) as pub:
        write_text(pub.path(out), rep.render(f"generated {pd.Timestamp.now(tz='UTC'):%Y-%m-%d %H:%M} UTC"))
    return out


def is_tune_folder(root: str | Path) -> bool:
    """Whether ``root`` holds a tuning run's output (``tune.json``, as ``receval tune`` writes it).

    Returns
    -------
    bool
        True when ``root/tune.json`` is a file.

    Examples
    --------
    >>> import tempfile
    >>> is_tune_folder(tempfile.mkdtemp())
    False
    """
    from receval.experiment.tune import SUMMARY_FILE

    return (Path(root) / SUMMARY_FILE).is_file()


def report_tune_folder(root: str | Path, out: str | Path | None = None) -> Path:
    """:func:`write_tune_report` of the tuning run in ``root``, to ``out`` (default ``root/tune.html``).

    Returns
    -------
    pathlib.Path
        The page written.

    Raises
    ------
    DataError
        When ``tune.json`` or one of the tables is missing or unreadable (the file is named).

    Examples
    --------
    >>> import tempfile
    >>> report_tune_folder(tempfile.mkdtemp())  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.DataError: .../tune.json: ...; give the output folder of 'receval tune', complete
    """
    from receval.experiment.tune import COMPARE_TABLE, SUMMARY_FILE, TRIALS_TABLE

    folder = Path(root)
    hint = "give the output folder of 'receval tune', complete"
    path = folder / SUMMARY_FILE
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
        _check_summary(summary)
        tables = []
        for name, columns in ((TRIALS_TABLE, ("study", "trial", "best_so_far")),
                              (COMPARE_TABLE, ("study", "metric", "pvalue_adj"))):  # fmt: skip
            path = folder / name
            table = pd.read_parquet(path)
            missing = [c for c in columns if c not in table.columns]
            if missing:
                raise ValueError(f"no column {missing[0]!r}")
            tables.append(table)
    except FileNotFoundError:
        raise DataError(f"{path}: missing; {hint}") from None
    except (OSError, ValueError) as err:
        raise DataError(f"{path}: {getattr(err, 'strerror', None) or err}; {hint}") from None
    trials, compare = tables
    return write_tune_report(summary, trials, compare, Path(out) if out is not None else folder / "tune.html")


_SUMMARY_KEYS = ("objective", "algorithms")
_ALGORITHM_KEYS = ("dataset", "recommender", "best_params", "trials", "trial_seconds", "budget", "validation", "test",
                   "test_metrics", "default_test_metrics")  # fmt: skip
"""What :func:`write_tune_report` reads of a ``tune.json``."""
_TEXT, _NUMBER, _OPTIONAL_NUMBER, _COUNT, _OBJECT, _NUMBERS = (
    "a string", "a number", "a number or null", "a whole number", "an object", "an object of numbers"
)  # fmt: skip
_TYPES = {
    "dataset": _TEXT, "recommender": _TEXT, "best_params": _OBJECT, "trials": _COUNT, "trial_seconds": _NUMBER,
    "budget": _OBJECT, "validation": _NUMBER, "test": _NUMBER, "default_validation": _OPTIONAL_NUMBER,
    "default_test": _NUMBER, "test_metrics": _NUMBERS, "default_test_metrics": _NUMBERS, "importance": _NUMBERS,
    "chosen": _TEXT,
}  # fmt: skip
"""The type of each key of an algorithm's entry that the report reads (the optional ones when present)."""


def _is(value: object, kind: str) -> bool:
    """Whether ``value`` (parsed JSON) is of ``kind``, one of the words of :data:`_TYPES`."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind == _NUMBER:
        return number
    if kind == _OPTIONAL_NUMBER:
        return value is None or number
    if kind == _COUNT:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if kind == _TEXT:
        return isinstance(value, str)
    if kind == _NUMBERS:
        return isinstance(value, dict) and all(_is(v, _NUMBER) for v in value.values())
    return isinstance(value, dict)


def _check_summary(summary: object) -> None:
    """ValueError naming the first key a ``tune.json`` lacks, or holds with the wrong type.

    Examples
    --------
    >>> good = {"dataset": "d", "recommender": "r", "best_params": {}, "trials": 1, "trial_seconds": 0.1,
    ...         "budget": {}, "validation": 0.5, "test": 0.4, "test_metrics": {}, "default_test_metrics": {}}
    >>> _check_summary({"objective": "ndcg@10", "algorithms": {"d/r": good}})
    >>> _check_summary({"objective": "ndcg@10", "algorithms": {"d/r": good | {"test": None}}})
    Traceback (most recent call last):
    ...
    ValueError: algorithms['d/r'].test is null, not a number
    """
    if not isinstance(summary, dict) or any(key not in summary for key in _SUMMARY_KEYS):
        raise ValueError(f"not a tuning summary (it needs {', '.join(_SUMMARY_KEYS)})")
    if not isinstance(summary["objective"], str):
        raise ValueError(f"'objective' is {json.dumps(summary['objective'])}, not a string")
    if not isinstance(summary["algorithms"], dict) or not summary["algorithms"]:
        raise ValueError("'algorithms' holds no recommender")
    for name, res in summary["algorithms"].items():
        missing = [key for key in _ALGORITHM_KEYS if not isinstance(res, dict) or key not in res]
        if missing:
            raise ValueError(f"algorithms[{name!r}] has no {missing[0]!r}")
        for key, kind in _TYPES.items():
            if key in res and not _is(res[key], kind):
                raise ValueError(f"algorithms[{name!r}].{key} is {json.dumps(res[key])[:60]}, not {kind}")
        absent = [m for m in res["test_metrics"] if m not in res["default_test_metrics"]]
        if absent:
            raise ValueError(f"algorithms[{name!r}].default_test_metrics has no {absent[0]!r}")
