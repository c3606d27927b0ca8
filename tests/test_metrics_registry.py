"""The metric registry owns every fact about a metric; the rest of receval reads them from it."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receval.errors import MetricError
from receval.metrics import registry as R
from receval.metrics.registry import MetricInput, get_definition, metric_direction, parse_metric, register_metric
from receval.report.figures import lower_is_better
from receval.simulate import METRICS as SIMULATOR_COLUMNS
from receval.stats.agreement import higher_is_better, kendall_agreement, quality_ranks

# descriptive quantities: no side is better (the training data's concentration; trec_eval's counts of
# retrieved and relevant items; how much of a list is judged, and the RBP this leaves undecided)
DESCRIPTIVE = {"gini_train", "num_ret", "num_rel", "judged", "unjudged", "rbp_residual", "delta_gap"}


def test_every_builtin_metric_declares_a_direction() -> None:
    for name in R.available_metrics():
        d = get_definition(name)
        if name in DESCRIPTIVE:
            assert d.direction is None
            continue
        direction = d.direction_for(d.defaults)
        assert direction in ("higher", "lower"), name


@pytest.mark.parametrize(
    ("metric", "direction"),
    [
        ("fp@10", "lower"),
        ("fn@10", "lower"),
        ("tp@10", "higher"),
        ("tn@10", "higher"),
        ("matthew_effect", "lower"),
        ("gini@10", "lower"),
        ("gini_train", None),
        ("fallout@10", "lower"),
        ("anti_precision@10", "lower"),
        ("rmse", "lower"),
        ("mae", "lower"),
        ("ndcg@10", "higher"),
        ("alpha_ndcg@10", "higher"),
        ("rbu@10", "higher"),
        ("entropy", "higher"),
        ("novelty@10", "lower"),  # mean popularity: lower = more novel
        ("novelty@10(form=epc)", "higher"),
        ("novelty@10(form=self_information)", "higher"),
    ],
)
def test_readers_take_direction_from_the_registry(metric: str, direction: str | None) -> None:
    assert metric_direction(metric) == direction
    assert metric_direction(parse_metric(metric)) == direction
    # figures (and the HTML/LaTeX tables' arrows and bold best, which call it) and agreement
    assert lower_is_better(metric) == (direction == "lower")
    if direction is None:
        with pytest.raises(MetricError, match="no direction"):
            higher_is_better(metric)
    else:
        assert higher_is_better(metric) == (direction == "higher")


def test_agreement_ranks_lower_is_better_metrics_by_the_registry() -> None:
    runs = {
        "a": pd.DataFrame({"round": [1], "fp@5": [1.0], "tp@5": [1.0]}),
        "b": pd.DataFrame({"round": [1], "fp@5": [3.0], "tp@5": [3.0]}),
    }
    assert quality_ranks(runs, "fp@5") == {"a": 1.0, "b": 2.0}
    assert quality_ranks(runs, "tp@5") == {"a": 2.0, "b": 1.0}


def test_simulator_columns_use_the_registry_spelling() -> None:
    for column in SIMULATOR_COLUMNS:
        assert metric_direction(column) in ("higher", "lower"), column
    assert "anti_precision" in SIMULATOR_COLUMNS and "antiprecision" not in SIMULATOR_COLUMNS
    assert metric_direction("antiprecision") is None  # the old spelling is no metric
    final = pd.DataFrame(
        {"recall": [0.3, 0.2], "fallout": [0.1, 0.2], "precision": [0.5, 0.4], "anti_precision": [0.4, 0.3]},
        index=["a", "b"],
    )
    assert kendall_agreement(final) == {"recall_fallout": 1.0, "precision_anti_precision": -1.0}


def test_every_kernel_takes_data_and_k() -> None:
    for name in R.available_metrics():
        params = list(inspect.signature(get_definition(name).fn).parameters)
        assert params[:2] == ["data", "k"], name


def test_needs_are_declared() -> None:
    assert all(get_definition(n).needs_aspects for n in ("alpha_ndcg", "ab_ndcg", "rbu", "s_recall"))
    assert get_definition("fallout").needs_negatives and get_definition("rmse").needs_predictions
    assert get_definition("novelty").needs_train and get_definition("ndcg").needs_grades
    assert get_definition("precision").needs_threshold and get_definition("alpha_ndcg").needs_threshold
    assert not get_definition("coverage").needs_threshold and not get_definition("ab_ndcg").needs_threshold


def test_unknown_name_suggests_close_names() -> None:
    with pytest.raises(MetricError, match="did you mean 'precision'"):
        parse_metric("precison@10")
    with pytest.raises(MetricError, match="unknown metric 'zzz'"):
        parse_metric("zzz@10")


def test_a_new_module_registers_a_metric_with_its_own_parameters() -> None:
    @register_metric(
        "unit_test_weighted_hits",
        direction="higher",
        bounds=(0, 1),
        defaults={"threshold": None, "weight": 1.0},
        description="weighted hits",
    )
    def weighted_hits(data: MetricInput, k: int, threshold: float | None = None, weight: float = 1.0):
        thr = data.threshold if threshold is None else threshold
        return weight * data.positive_at(thr)[:, :k].mean(axis=1)

    try:
        R.register_alias("unit_test_wh", "unit_test_weighted_hits", weight=0.5)
        data = MetricInput(np.array([[0, 1]]), sp.csr_matrix(np.array([[5.0, 1.0]])), threshold=4)
        assert parse_metric("unit_test_weighted_hits@2(weight=0.5)").compute(data) == 0.25
        assert parse_metric("unit_test_wh@2").compute(data) == 0.25
        assert parse_metric("unit_test_wh@2(weight=1)").compute(data) == 0.5  # written params win
        assert get_definition("unit_test_weighted_hits").aliases == ("unit_test_wh",)
        assert metric_direction("unit_test_wh@2") == "higher"
        with pytest.raises(MetricError, match="unknown metric"):
            R.register_alias("unit_test_x", "no_such_metric")
        with pytest.raises(MetricError, match="unknown parameter"):
            R.register_alias("unit_test_y", "unit_test_weighted_hits", nope=1)
    finally:
        R._REGISTRY.pop("unit_test_weighted_hits")
        from receval.metrics._definition import _ALIASES

        _ALIASES.pop("unit_test_wh", None)


def test_direction_must_be_a_known_value() -> None:
    with pytest.raises(MetricError, match="direction"):
        register_metric("unit_test_bad", direction="up")  # type: ignore[arg-type]


@st.composite
def _inputs(draw):
    n_users, n_items, n_aspects = draw(st.integers(1, 4)), draw(st.integers(2, 7)), draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))

    def ratings(density: float) -> sp.csr_matrix:
        values = rng.integers(1, 6, (n_users, n_items)).astype(float)
        return sp.csr_matrix(np.where(rng.random((n_users, n_items)) < density, values, 0.0))

    aspects = (rng.random((n_items, n_aspects)) < 0.5).astype(float)
    aspects[0, 0] = 1.0  # the table gives an aspect to some item
    width = draw(st.integers(1, n_items))
    rankings = np.array([rng.permutation(n_items)[:width] for _ in range(n_users)])
    for row, length in zip(rankings, rng.integers(0, width + 1, n_users), strict=True):
        row[length:] = -1  # short lists are padded at the end
    rows = np.repeat(np.arange(n_users), 2)
    rated = rng.integers(1, 6, len(rows)).astype(float)
    return MetricInput(
        rankings,
        ratings(0.5),
        threshold=float(draw(st.sampled_from([1, 3, 4]))),
        train=ratings(0.4),
        aspects=sp.csr_matrix(aspects),
        rating_max=5.0,
        predictions=(rows, rated, rated + rng.normal(0, 1, len(rows))),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_inputs(), st.integers(1, 6))
def test_values_lie_in_the_declared_bounds(data: MetricInput, k: int) -> None:
    checked = 0
    for name in R.available_metrics():
        d = get_definition(name)
        if d.bounds is None:
            continue
        metric = R.Metric.of(name, None if d.k == "none" else k)
        values = [metric.compute(data)] + (metric.per_user(data).tolist() if d.kind != "system" else [])
        low, high = d.bounds
        for v in values:
            assert np.isnan(v) or low - 1e-12 <= v <= high + 1e-12, (name, v)
        checked += 1
    assert checked >= 15
