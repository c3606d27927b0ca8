"""trec_eval's own regression tests run through receval with convention=trec_eval, and pytrec_eval per query.

tests/peers/trec_eval/ holds trec_eval's test/ files as its authors wrote them (SOURCE.md gives
the commit): qrels and runs, and the output trec_eval must print for each (its Makefile's
quicktest target diffs them). runs.json lists those runs (with trec_eval's -l and -c), and
measures.tsv the trec_eval measures receval has, with the metric string receval reads for each (and the one
compared with pytrec_eval, built on trec_eval 9, where the two trec_evals differ).
Every value of those measures in every expected output, per query and over all queries, must
be receval's to the 4 decimals trec_eval prints.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import pytest

import receval

HERE = Path(__file__).resolve().parent / "peers" / "trec_eval"
RUNS = {run["id"]: run for run in json.loads((HERE / "runs.json").read_text(encoding="utf-8"))["runs"]}
# trec_eval prints %.4f: a value rounds to the printed one
PRINTED = 0.5e-4 + 1e-12


def _measures(column: int) -> dict[str, str]:
    """measures.tsv: trec_eval's name -> receval's metric string (column 1), or the string compared with
    pytrec_eval (column 2, where given: pytrec_eval is built on trec_eval 9; else column 1)."""
    out = {}
    for line in (HERE / "measures.tsv").read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            fields = line.split("\t")
            out[fields[0]] = fields[min(column, len(fields) - 1)]
    return out


MEASURES = _measures(1)
AS_PYTREC = _measures(2)


@cache
def _expected(run_id: str) -> dict[str, dict[str, str]]:
    """{measure: {query or 'all': the printed value}} of the run's expected output."""
    out: dict[str, dict[str, str]] = {}
    for line in (HERE / RUNS[run_id]["expected"]).read_text(encoding="utf-8").splitlines():
        name, query, value = line.split()
        out.setdefault(name, {})[query] = value
    return out


def _queries(path: Path) -> list[str]:
    """The query ids of a qrels file, in order of first appearance ('#' lines are comments)."""
    seen: dict[str, None] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            seen.setdefault(line.split()[0], None)
    return list(seen)


@cache
def _evaluate_all(run_id: str, metrics: tuple[str, ...]) -> dict[str, tuple[dict[str, float], float]]:
    """receval's per-query values and summary of several metrics on one of trec_eval's runs, read once."""
    run = RUNS[run_id]
    qrels = HERE / run["qrels"]
    # -c: every query of the qrels is averaged over, a query without a ranked document scoring 0
    complete = {"users": _queries(qrels), "empty_users": "zero"} if run["complete"] else {}
    result = receval.evaluate(
        HERE / run["run"], qrels, list(metrics), threshold=run["threshold"], convention="trec_eval", **complete
    )
    users = result.per_user["user"].astype(str)
    out = {}
    for metric in metrics:
        per_query: dict[str, float] = {}
        if metric in result.per_user:
            per_query = dict(zip(users, result.per_user[metric].astype(float), strict=True))
        out[metric] = (per_query, float(result.summary[metric]))
    return out


@cache
def _together(run_id: str, metrics: tuple[str, ...]) -> dict[str, tuple[dict[str, float], float]] | None:
    try:
        return _evaluate_all(run_id, metrics)
    except Exception:  # one metric's error: each is then evaluated alone, to fail on its own
        return None


def _evaluate(run_id: str, metric: str, table: dict[str, str]) -> tuple[dict[str, float], float]:
    """One metric's per-query values and summary, from the run's metrics (``table``'s strings for the measures
    of its expected output) evaluated together, or alone when one of them fails."""
    together = _together(run_id, tuple(dict.fromkeys(table[name] for name in _expected(run_id) if name in table)))
    return together[metric] if together is not None else _evaluate_all(run_id, (metric,))[metric]


CASES = [
    pytest.param(run_id, name, id=f"{run_id}-{name}")
    for run_id in RUNS
    for name in _expected(run_id)
    if name in MEASURES
]


@pytest.mark.parametrize(("run_id", "name"), CASES)
def test_trec_eval_output(run_id: str, name: str) -> None:
    per_query, summary = _evaluate(run_id, MEASURES[name], MEASURES)
    wrong = {}
    for query, printed in _expected(run_id)[name].items():
        got = summary if query == "all" else per_query.get(query, math.nan)
        if not abs(got - float(printed)) <= PRINTED:
            wrong[query] = (got, printed)
    run = RUNS[run_id]
    assert not wrong, (
        f"{run['command']} ({run['makefile']}): {name} as {MEASURES[name]!r}: query: (got, printed) {wrong}"
    )


def test_every_run_checks_measures() -> None:
    """Each of trec_eval's runs checks receval on some measures (a renamed measure cannot empty the suite)."""
    assert {run_id for run_id, _ in (case.values for case in CASES)} == set(RUNS)
    assert len(CASES) > 200


@pytest.mark.parametrize("run_id", ["all_trec_q", "qrels_comments", "all_trec_q_level2"])
def test_evaluate_command_prints_trec_evals_summary(run_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``receval evaluate --convention trec_eval`` on trec_eval's files prints its summary line of every measure."""
    from receval.cli import main

    run = RUNS[run_id]
    names = [name for name in _expected(run_id) if name in MEASURES]
    args = ["evaluate", "--truth", str(HERE / run["qrels"]), "--recs", str(HERE / run["run"])]
    args += ["--metrics", ",".join(MEASURES[name] for name in names), "--threshold", str(run["threshold"])]
    assert main([*args, "--convention", "trec_eval", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["conventions"]["convention"] == "trec_eval"
    wrong = {
        name: (printed[MEASURES[name]], _expected(run_id)[name]["all"])
        for name in names
        if not abs(printed[MEASURES[name]] - float(_expected(run_id)[name]["all"])) <= PRINTED
    }
    assert not wrong, f"{run['command']}: measure: (printed by receval, by trec_eval) {wrong}"


# ---------------------------------------------------------------- pytrec_eval, per query, to 1e-9
def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            query, _, doc, grade = line.split()[:4]
            qrels.setdefault(query, {})[doc] = int(grade)
    return qrels


def _read_run(path: Path) -> dict[str, dict[str, float]]:
    """trec_eval's reading of a run: query, Q0, document, rank, score; fields after the tag ignored."""
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            query, _, doc, _, score = line.split()[:5]
            run.setdefault(query, {})[doc] = float(score)
    return run


# pytrec_eval's per-query gm_map is the log of AP (trec_eval prints only the summary, checked above)
SUMMARY_ONLY = {"gm_map"}
try:
    import pytrec_eval
except ImportError:  # the trec_eval outputs above are the reference; this adds pytrec_eval's digits
    pytrec_eval = None


def _pytrec_name(name: str) -> str:
    """trec_eval's printed name as the measure string pytrec_eval takes: P_10 -> P.10, set_F -> set_F."""
    family = max((m for m in pytrec_eval.supported_measures if name == m or name.startswith(m + "_")), key=len)
    return family if family == name else f"{family}.{name[len(family) + 1 :]}"


@cache
def _pytrec(run_id: str) -> dict[str, dict[str, float]]:
    run = RUNS[run_id]
    wanted = {_pytrec_name(name) for name in _pytrec_names(run_id)}
    evaluator = pytrec_eval.RelevanceEvaluator(
        _read_qrels(HERE / run["qrels"]), wanted, relevance_level=int(run["threshold"])
    )
    return evaluator.evaluate(_read_run(HERE / run["run"]))


def _pytrec_names(run_id: str) -> list[str]:
    """The measures of the run's expected output that both receval and pytrec_eval compute, per query."""
    supported = pytrec_eval.supported_measures
    return [
        name
        for name in _expected(run_id)
        if name in MEASURES
        and name not in SUMMARY_ONLY
        and any(name == m or name.startswith(m + "_") for m in supported)
    ]


# pytrec_eval has no -c (every query of the qrels): it is compared on the other runs
PYTREC_CASES = (
    []
    if pytrec_eval is None
    else [
        pytest.param(run_id, name, id=f"{run_id}-{name}")
        for run_id, run in RUNS.items()
        if not run["complete"]
        for name in _pytrec_names(run_id)
    ]
)


@pytest.mark.skipif(pytrec_eval is None, reason="pytrec_eval is not installed")
def test_pytrec_eval_compares_measures() -> None:
    assert len(PYTREC_CASES) > 150


@pytest.mark.parametrize(("run_id", "name"), PYTREC_CASES)
def test_pytrec_eval_per_query(run_id: str, name: str) -> None:
    theirs = _pytrec(run_id)
    per_query, _ = _evaluate(run_id, AS_PYTREC[name], AS_PYTREC)
    assert sorted(per_query) == sorted(theirs)
    wrong = {q: (per_query[q], v[name]) for q, v in theirs.items() if not abs(per_query[q] - v[name]) <= 1e-9}
    assert not wrong, f"{name} as {AS_PYTREC[name]!r} on {RUNS[run_id]['run']}: query: (receval, pytrec_eval) {wrong}"
