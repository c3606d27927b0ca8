"""The eight axioms of Parapar & Radlinski (RecSys 2021) as executable checks.

Each axiom is a constructive test: a small world (items with aspects, one user's truth
ratings and training ratings) and a pair of rankings of which the axiom says the first
is better; for TopHeav / TopHeavComp a family of pairs indexed by n, of which one must
go the stated way. :func:`check_axioms` evaluates any metric on every pair and reports
satisfied / violated with the witnessing example.

A metric is either a callable ``metric(rankings, truth, aspects, train) -> per-user
values`` (the two rankings of a pair are two users with identical truth and train
rows) evaluated at the full list length, or a registry string without cutoff, e.g.
``"alpha_ndcg(alpha=0.5)"`` (the cutoff is set to the list length).

Constructions (ratings 0..``rmax``; "non-relevant" = rated ``nonrel_rating``, 0 by
default as in the paper's i^0; relevance threshold 1 for binary metrics; γ from the
training ratings, which rate separate profile items, never the listed ones):

- Pri: same aspect, ratings 5 and 3: [5, 3] beats [3, 5].
- Deep: two same-aspect (5, 3) pairs on two aspects of equal preference; swapping the
  top pair into order beats swapping the bottom pair: [5a, 3a, 3b, 5b] beats [3a, 5a, 5b, 3b].
- NonPriSatAsp: after three items of aspect a, an item of aspect b rated 4 placed before
  one of aspect a rated 5 beats the reverse (a and b equally preferred).
- TopHeav: for some n ≤ ``max_n``: one relevant item (rating 5) then 2n−1 non-relevant
  beats n non-relevant then n relevant. Relevant items each carry their own aspect and
  the aspects are equally preferred, so redundancy does not decide it.
- TopHeavComp: for some m ≤ ``max_n`` the reverse holds.
- AspRel: two items rated 4, the user prefers aspect a (γ = 0.75 vs 0.25): a first wins.
- MoreAsp: after one item of aspect a, two items rated 4 of aspects a and b (equally
  preferred): b first wins.
- MissOverNon: an unrated item of a preferred aspect before a rated non-relevant item
  of the same aspect beats the reverse.

Examples
--------
>>> from receval.metrics.aspects import ab_ndcg
>>> table = check_axioms(lambda r, t, a, tr: ab_ndcg(r, t, a, tr, k=r.shape[1], rmax=5))
>>> bool(table["satisfied"].all())
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from receval.errors import ConfigError

__all__ = [
    "AXIOMS",
    "axiom_table",
    "calibration_metrics",
    "check_axioms",
    "markdown",
    "metric_callable",
    "standard_metrics",
]

AXIOMS = ("Pri", "Deep", "NonPriSatAsp", "TopHeav", "TopHeavComp", "AspRel", "MoreAsp", "MissOverNon")
MetricFn = Callable[[np.ndarray, sp.csr_matrix, sp.csr_matrix, sp.csr_matrix], np.ndarray]


@dataclass
class _World:
    """Items (aspect sets), one user's truth ratings (None = unrated) and training profile."""

    item_aspects: list[list[int]]
    truth: dict[int, float]
    profile: list[tuple[list[int], float]]  # training items: (aspects, rating)
    n_aspects: int

    def build(self, n_rows: int) -> tuple[sp.csr_matrix, sp.csr_matrix, sp.csr_matrix]:
        n_listed = len(self.item_aspects)
        sets = self.item_aspects + [a for a, _ in self.profile]
        rows = [i for i, s in enumerate(sets) for _ in s]
        cols = [a for s in sets for a in s]
        aspects = sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(sets), self.n_aspects))
        t_items = sorted(self.truth)
        truth = sp.csr_matrix(
            (
                np.tile([self.truth[i] for i in t_items], n_rows),
                np.tile(t_items, n_rows),
                np.arange(n_rows + 1) * len(t_items),
            ),
            shape=(n_rows, len(sets)),
        )
        p_items = list(range(n_listed, len(sets)))
        train = sp.csr_matrix(
            (
                np.tile([r for _, r in self.profile], n_rows),
                np.tile(p_items, n_rows),
                np.arange(n_rows + 1) * len(p_items),
            ),
            shape=(n_rows, len(sets)),
        )
        return truth, aspects, train


def metric_callable(text: str, **input_options: Any) -> MetricFn:
    """A registry metric string without cutoff (``"ndcg"``, ``"alpha_ndcg(alpha=0.3)"``) as a
    callable evaluated at the full list length (threshold 1, rating_max 5 unless given).

    Returns
    -------
    callable
        ``fn(rankings, truth, aspects, train)`` giving one value per user.

    Examples
    --------
    >>> fn = metric_callable("precision")
    >>> import numpy as np, scipy.sparse as sp
    >>> fn(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 0.0]])), None, None).tolist()
    [0.5]
    """
    from receval.metrics.registry import MetricInput, parse_metric

    name, _, params = text.partition("(")
    if "@" in name:
        raise ConfigError(f"give the metric without a cutoff (the list length is used): {text!r}")
    options = {"threshold": 1.0, "rating_max": 5.0, **input_options}

    def fn(rankings, truth, aspects, train):
        metric = parse_metric(f"{name}@{rankings.shape[1]}" + (f"({params}" if params else ""))
        data = MetricInput(rankings, truth, aspects=aspects, train=train, **options)
        return metric.per_user(data)

    return fn


def _pair(metric: MetricFn, world: _World, better: Sequence[int | None], worse: Sequence[int | None]):
    truth, aspects, train = world.build(2)
    r = np.array([[-1 if i is None else i for i in better], [-1 if i is None else i for i in worse]])
    v = np.asarray(metric(r, truth, aspects, train), dtype=float)
    return float(v[0]), float(v[1])


def _describe(world: _World, ranking: list[int]) -> str:
    def one(i: int) -> str:
        r = world.truth.get(i)
        return f"{'+'.join('a' + str(a) for a in world.item_aspects[i])}:{'?' if r is None else f'{r:g}'}"

    return "[" + ", ".join(one(i) for i in ranking) + "]"


def _pairs(nonrel: float) -> dict[str, tuple[_World, list[int], list[int]]]:
    even = [([0], 5.0), ([1], 5.0)]
    out = {}
    w = _World([[0], [0]], {0: 5.0, 1: 3.0}, even, 2)
    out["Pri"] = (w, [0, 1], [1, 0])
    w = _World([[0], [0], [1], [1]], {0: 5.0, 1: 3.0, 2: 5.0, 3: 3.0}, even, 2)
    out["Deep"] = (w, [0, 1, 3, 2], [1, 0, 2, 3])
    w = _World([[0], [0], [0], [0], [1]], {0: 5.0, 1: 5.0, 2: 5.0, 3: 5.0, 4: 4.0}, even, 2)
    out["NonPriSatAsp"] = (w, [0, 1, 2, 4, 3], [0, 1, 2, 3, 4])
    w = _World([[0], [1]], {0: 4.0, 1: 4.0}, [([0], 5.0)] * 3 + [([1], 5.0)], 2)
    out["AspRel"] = (w, [0, 1], [1, 0])
    w = _World([[0], [0], [1]], {0: 4.0, 1: 4.0, 2: 4.0}, even, 2)
    out["MoreAsp"] = (w, [0, 2, 1], [0, 1, 2])
    w = _World([[0], [0]], {1: nonrel}, even, 2)
    out["MissOverNon"] = (w, [0, 1], [1, 0])
    return out


def _top_heaviness(n: int, nonrel: float) -> tuple[_World, list[int], list[int]]:
    """2n positions: item j < 2n relevant (own aspect j), item 2n + j non-relevant."""
    n_aspects = 2 * n
    items = [[j] for j in range(2 * n)] + [[j] for j in range(2 * n)]
    truth = {j: 5.0 for j in range(2 * n)} | {2 * n + j: nonrel for j in range(2 * n)}
    profile = [([j], 5.0) for j in range(n_aspects)]
    world = _World(items, truth, profile, n_aspects)
    top = [0] + [2 * n + j for j in range(1, 2 * n)]
    bottom = [2 * n + j for j in range(n)] + list(range(n, 2 * n))
    return world, top, bottom


def check_axioms(
    metric: MetricFn | str, *, nonrel_rating: float = 0.0, max_n: int = 10, tolerance: float = 1e-12
) -> pd.DataFrame:
    """Evaluate ``metric`` on the constructive pairs of the eight axioms.

    Returns one row per axiom: ``satisfied`` (bool), the values of the preferred and the
    other ranking of the witnessing pair (for TopHeav/TopHeavComp: the first n that
    satisfies it, else the n = ``max_n`` pair), ``n`` (TopHeav/TopHeavComp) and
    ``witness`` (the two rankings as ``aspects:rating``, ``?`` = unrated). Strict
    inequality beyond ``tolerance`` is required: a tie violates the axiom.

    Returns
    -------
    pandas.DataFrame
        Columns ``axiom``, ``satisfied``, ``better``, ``worse``, ``n``, ``witness``, one
        row per axiom in the order of :data:`AXIOMS`.

    Examples
    --------
    Precision ignores the order of the list, so only TopHeavComp holds:

    >>> table = check_axioms("precision")
    >>> table.loc[table["satisfied"], "axiom"].tolist()
    ['TopHeavComp']
    """
    fn = metric_callable(metric) if isinstance(metric, str) else metric
    if max_n < 1:
        raise ConfigError(f"max_n must be at least 1, got {max_n}")
    rows = []
    pairs = _pairs(nonrel_rating)
    for axiom in AXIOMS:
        n: int | None = None
        if axiom in ("TopHeav", "TopHeavComp"):
            for n in range(1, max_n + 1):  # max_n >= 1: the pair of the last n tried stays
                world, top, bottom = _top_heaviness(n, nonrel_rating)
                better, worse = (top, bottom) if axiom == "TopHeav" else (bottom, top)
                b, w = _pair(fn, world, better, worse)
                if b > w + tolerance:
                    break
        else:
            world, better, worse = pairs[axiom]
            b, w = _pair(fn, world, better, worse)
        rows.append(
            {
                "axiom": axiom,
                "satisfied": bool(b > w + tolerance),
                "better": b,
                "worse": w,
                "n": n,
                "witness": f"{_describe(world, better)} > {_describe(world, worse)}",
            }
        )
    return pd.DataFrame(rows)


def axiom_table(metrics: Mapping[str, MetricFn | str], **options: Any) -> pd.DataFrame:
    """Metrics x axioms table of ✓ (satisfied) / ✗ (violated).

    Returns
    -------
    pandas.DataFrame
        One row per metric (by the keys of ``metrics``), one column per axiom, holding
        ``✓`` or ``✗``.

    Examples
    --------
    >>> axiom_table({"precision": "precision"}).loc["precision", "Pri"]
    '✗'
    """
    out = {}
    for name, metric in metrics.items():
        res = check_axioms(metric, **options)
        out[name] = ["✓" if s else "✗" for s in res["satisfied"]]
    return pd.DataFrame.from_dict(out, orient="index", columns=list(AXIOMS))


def standard_metrics(threshold: float = 1.0) -> dict[str, MetricFn]:
    """The metrics of the documented table: αβ-nDCG (defaults, r_max 5) and the baselines,
    whose relevance threshold is ``threshold``.

    Returns
    -------
    dict of str to callable
        Metric name to its callable (:func:`metric_callable`), for :func:`axiom_table`.

    Examples
    --------
    >>> sorted(standard_metrics())[:4]
    ['ab_ndcg', 'alpha_ndcg', 'eu', 'ndcg']
    """
    from receval.metrics.aspects import ab_ndcg

    def ab(rankings, truth, aspects, train):
        return ab_ndcg(rankings, truth, aspects, train, k=rankings.shape[1], rmax=5)

    names = ["alpha_ndcg", "nerr_ia", "nnrbp", "p_ia", "s_recall", "s_rr", "rbu", "eu", "ndcg", "precision"]
    return {"ab_ndcg": ab, **{n: metric_callable(n, threshold=threshold) for n in names}}


def calibration_metrics() -> dict[str, MetricFn]:
    """The calibration measures (:mod:`receval.metrics.calibration`) as axiom checks take them: miscalibration is
    better low, so each callable gives its negative (higher = better, as :func:`check_axioms` reads a value).

    The profile is each world's training items (their aspects), the list's distribution that of the ranking;
    :data:`receval.metrics.calibration.AXIOMS` records which axioms each form satisfies.

    Returns
    -------
    dict of str to callable
        ``miscalibration_kl`` (Steck's C_KL, α = 0.01), ``miscalibration_js`` (the Jensen–Shannon form) and their
        rank-weighted forms ``miscalibration_kl_rank``, ``miscalibration_js_rank``.

    Examples
    --------
    >>> table = axiom_table(calibration_metrics())
    >>> table.loc["miscalibration_kl_rank", "MoreAsp"], table.loc["miscalibration_kl", "MoreAsp"]
    ('✓', '✗')
    """
    out: dict[str, MetricFn] = {}
    for weighting in ("uniform", "rank"):
        for form in ("kl", "js"):
            fn = metric_callable(f"miscalibration(divergence={form},weighting={weighting})")
            name = f"miscalibration_{form}" + ("_rank" if weighting == "rank" else "")
            out[name] = _negated(fn)
    return out


def _negated(fn: MetricFn) -> MetricFn:
    """``fn`` with its values negated (a lower-is-better measure read as higher-is-better)."""

    def negated(rankings: np.ndarray, truth: sp.csr_matrix, aspects: sp.csr_matrix, train: sp.csr_matrix) -> np.ndarray:
        return -np.asarray(fn(rankings, truth, aspects, train), dtype=np.float64)

    return negated


def markdown(table: pd.DataFrame) -> str:
    """A metrics x axioms table as GitHub markdown.

    Returns
    -------
    str
        The table's markdown, a header row and a separator first.

    Examples
    --------
    >>> print(markdown(axiom_table({"precision": "precision"})).splitlines()[2])
    | precision | ✗ | ✗ | ✗ | ✗ | ✓ | ✗ | ✗ | ✗ |
    """
    head = "| metric | " + " | ".join(table.columns) + " |"
    rule = "|---" * (len(table.columns) + 1) + "|"
    rows = ["| " + str(name) + " | " + " | ".join(map(str, row)) + " |" for name, row in table.iterrows()]
    return "\n".join([head, rule, *rows])
