"""Other libraries' own metric test cases, kept as data and run through receval with that library's preset.

Each library's cases are in ``tests/peers/<library>/cases.json`` (its licence notice and the
commit they were read from in ``SOURCE.md`` beside it)::

    {
      "convention": "recbole",                   # the preset every case runs with
      "inputs": {"NAME": {"recommendations": {"columns": [...], "rows": [[...], ...]},
                          "truth": {...}, "train": {...}, "predictions": {...}, "aspects": {...}}},
      "cases": [{"id": "test_ndcg@2",            # unique within the library
                 "source": "tests/metrics/test_topk_metrics.py:53",   # where the author wrote it
                 "written": "1 / np.log2(2) / (...)",                  # the expected value as written
                 "inputs": "NAME",                 # or the tables themselves, as in "inputs"
                 "metric": "ndcg@2",
                 "expected": {"u2": 0.61}        # per user, or one number: the summary
                 "options": {"threshold": 1},    # more keyword arguments of receval.evaluate (and file-level)
                 "rel": 1e-6, "abs": 0}]         # tolerance (file-level "rel"/"abs" by default)
      "not_run": [{"source": ..., "why": ...}]   # the library's cases receval cannot express
    }

``null`` as an expected value means NaN (the user is not scored).

>>> cases = load("recbole")
>>> len({case.id for case in cases}) == len(cases) > 0  # ids are unique
True
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import receval

PEERS = Path(__file__).resolve().parent
TABLES = ("recommendations", "truth", "train", "predictions", "aspects")


@dataclass(frozen=True)
class Case:
    """One test case of another library: a metric string, a preset, inputs, the author's expected value."""

    library: str
    id: str
    source: str
    metric: str
    convention: str
    tables: dict[str, pd.DataFrame]
    expected: float | dict[str, float | None] | None
    rel: float
    abs: float
    options: dict[str, Any] = field(default_factory=dict)


def _table(spec: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(spec["rows"], columns=spec["columns"])


def _tables(library: str, name: str, given: dict[str, Any]) -> dict[str, pd.DataFrame]:
    unknown = set(given) - set(TABLES)
    assert not unknown, f"{library} input {name}: unknown tables {sorted(unknown)}; known: {TABLES}"
    return {key: _table(spec) for key, spec in given.items()}


def load(library: str) -> list[Case]:
    """The cases of ``tests/peers/<library>/cases.json``, each with its input tables built.

    >>> [c.metric for c in load("recbole") if c.id == "test_hit@1"]
    ['hit_rate@1']
    """
    doc = json.loads((PEERS / library / "cases.json").read_text(encoding="utf-8"))
    inputs = {name: _tables(library, name, given) for name, given in doc["inputs"].items()}
    cases = []
    for raw in doc["cases"]:
        given = raw["inputs"]
        cases.append(
            Case(
                library=library,
                id=raw["id"],
                source=raw["source"],
                metric=raw["metric"],
                convention=raw.get("convention", doc["convention"]),
                tables=inputs[given] if isinstance(given, str) else _tables(library, raw["id"], given),
                expected=raw["expected"],
                rel=float(raw.get("rel", doc.get("rel", 0.0))),
                abs=float(raw.get("abs", doc.get("abs", 0.0))),
                options={**doc.get("options", {}), **raw.get("options", {})},
            )
        )
    return cases


def run(case: Case) -> float | dict[str, float]:
    """receval's value for the case: the summary, or the per-user values of the users the case names."""
    tables = case.tables
    result = receval.evaluate(
        tables.get("recommendations"),
        tables["truth"],
        [case.metric],
        train=tables.get("train"),
        predictions=tables.get("predictions"),
        aspects=tables.get("aspects"),
        convention=case.convention,
        **case.options,
    )
    if not isinstance(case.expected, dict):
        return result.summary[case.metric]
    per_user = result.per_user.set_index(result.per_user["user"].astype(str))[case.metric]
    return {user: float(per_user[user]) if user in per_user.index else math.nan for user in case.expected}


def close(got: float, expected: float | None, rel: float, abs_: float) -> bool:
    """``got`` equals the expected value within the tolerance; ``None`` expects NaN.

    >>> close(float("nan"), None, 0, 0), close(0.5, 0.5000001, 1e-6, 0), close(0.0, None, 0, 0)
    (True, True, False)
    """
    if expected is None:
        return math.isnan(got)
    return math.isclose(got, expected, rel_tol=rel, abs_tol=abs_)


def check(case: Case) -> None:
    """Assert receval's value for the case equals the author's, naming the case's source line when not."""
    got = run(case)
    where = f"{case.library} {case.id} ({case.source}): {case.metric} with convention={case.convention}"
    if isinstance(case.expected, dict):
        assert isinstance(got, dict)
        wrong = {u: (got[u], e) for u, e in case.expected.items() if not close(got[u], e, case.rel, case.abs)}
        assert not wrong, f"{where}: user: (got, expected) {wrong}"
    else:
        assert isinstance(got, float)
        assert close(got, case.expected, case.rel, case.abs), f"{where}: got {got!r}, expected {case.expected!r}"
