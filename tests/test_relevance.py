"""One relevance policy: the same data gets the same relevance from every entry point.

The rule is ``rating ≥ λ`` with λ from :meth:`RatingScale.default_threshold` (1, or the
smallest positive value of a scale of fractions). The data here are on a scale of
halves (0.5, 1.5, ... 4.5): by the policy λ = 0.5 and every rating is relevant, while
the old defaults (1 in evaluate, 4 or 3 "above the midpoint" in the studies) would
each have called the 0.5 ratings something else.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import receval
from receval.cli import main
from receval.data.interactions import Interactions, RatingScale, relevant
from receval.data.synthetic import generate
from receval.errors import ConfigError, MetricError
from receval.metrics.registry import MetricInput
from receval.recommenders import make
from receval.split import holdout
from receval.studies.attacks import run_attack
from receval.studies.freshness import item_cold_start
from receval.studies.metaeval import per_user

# a: x (0.5) and y (4); b: x (2.5) and z (5). Lists: a gets x, q (q unrated); b gets z, x.
TRUTH = pd.DataFrame({"user": ["a", "a", "b", "b"], "item": ["x", "y", "x", "z"], "rating": [0.5, 4.0, 2.5, 5.0]})
RECS = pd.DataFrame({"user": ["a", "a", "b", "b"], "item": ["x", "q", "z", "x"], "score": [0.9, 0.5, 0.9, 0.8]})
# every rated item relevant: a 1 hit of 2, b 2 of 2 (with λ = 1, a's 0.5 would not count: 0.5 overall)
PRECISION = {"a": 0.5, "b": 1.0}


def _halves(seed: int = 0) -> Interactions:
    """Generated 1-5 ratings moved down by a half: the scale 0.5..4.5 in steps of 1."""
    data = generate(n_users=60, n_items=50, n_ratings=1200, seed=seed)
    return Interactions.from_arrays(data.users, data.items, data.ratings - 0.5)


def _cli(args: list[str]) -> tuple[int, dict]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(args)
    return status, json.loads(out.getvalue()) if status == 0 else {}


def test_the_policy_on_each_kind_of_scale() -> None:
    assert RatingScale(1, 5, 1).default_threshold() == 1.0  # trec_eval's and ranx's relevance level
    assert RatingScale(0, 3, 1).default_threshold() == 1.0  # graded qrels: a judged 0 is not relevant
    assert RatingScale(0.5, 5, 0.5).default_threshold() == 0.5  # every positive rating of a scale of halves
    assert RatingScale(0.1, 0.9, 0.1).default_threshold() == pytest.approx(0.1)
    assert RatingScale(-10, 10).default_threshold() == 1.0  # continuous through 0: no smallest positive value
    assert relevant(np.array([0.5, 0.49, np.nan]), 0.5).tolist() == [True, False, False]


def test_evaluate_and_the_metric_input_share_the_default() -> None:
    res = receval.evaluate(RECS, TRUTH, ["precision@2"])
    assert res.conventions.threshold == 0.5
    assert dict(zip(res.per_user["user"], res.per_user["precision@2"], strict=True)) == PRECISION
    assert res.summary["precision@2"] == pytest.approx(0.75)
    truth = sp.csr_matrix(np.array([[0.5, 4.0, 0.0, 0.0], [2.5, 0.0, 5.0, 0.0]]))  # items x, y, z, q
    rankings = np.array([[0, 3], [2, 0]])
    assert MetricInput(rankings, truth).threshold == 0.5
    assert per_user("precision@2", rankings, truth, None).tolist() == [0.5, 1.0]  # metaeval's kernel


def test_the_evaluate_command_gives_the_same_relevance(tmp_path: Path) -> None:
    TRUTH.to_csv(tmp_path / "truth.csv", index=False)
    RECS.to_csv(tmp_path / "recs.csv", index=False)
    status, body = _cli(["evaluate", "--truth", str(tmp_path / "truth.csv"), "--recs", str(tmp_path / "recs.csv"),
                         "--metrics", "precision@2", "--json"])  # fmt: skip
    assert status == 0
    assert body["precision@2"] == pytest.approx(0.75) and body["conventions"]["threshold"] == 0.5


def test_the_simulator_command_counts_every_rating_positive(tmp_path: Path) -> None:
    data = _halves()
    path = tmp_path / "ratings.csv"
    pd.DataFrame({"user": data.users, "item": data.items, "rating": data.ratings}).to_csv(path, index=False)
    status, body = _cli(["simulate", "--data", str(path), "--format", "csv", "--rounds", "3",
                         "--algorithms", "random", "--json"])  # fmt: skip
    final = body["final"]["random"]
    # λ = 0.5: no test rating is below it, so nothing recommended is a false positive and Fallout is undefined
    assert status == 0 and final["anti_precision"] == 0.0 and final["fallout"] is None
    assert final["precision"] > 0


@pytest.mark.parametrize("study", ["attack", "freshness", "evaluate_model"])
def test_studies_default_to_the_policy(study: str) -> None:
    data = _halves(1)
    target = [data.item_ids[7]]

    def run(threshold: float | None) -> dict:
        if study == "attack":
            return run_attack(data, "average", target, "popularity", filler=5, threshold=threshold)
        if study == "freshness":
            return item_cold_start(data, "popularity", ["precision@5", "recall@5"], k=5, threshold=threshold)
        train, test = holdout(data, test_fraction=0.2, seed=0)
        result = receval.evaluate_model(make("popularity"), train, test, ["precision@5"], k=5, threshold=threshold)
        return result.summary

    default, policy, trec = run(None), run(0.5), run(1.0)
    assert default == policy
    assert default != trec  # the 0.5 ratings are relevant only under the policy: a different default shows


def test_a_threshold_is_checked_only_when_a_metric_reads_it() -> None:
    truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "x"], "rating": [0.1, 0.5, 0.9]})
    predictions = truth.assign(prediction=[0.2, 0.5, 0.6])
    res = receval.evaluate(None, truth, ["rmse", "mae"], predictions=predictions, threshold=7)
    assert res.summary["rmse"] == pytest.approx(math.sqrt((0.01 + 0 + 0.09) / 3))
    assert res.summary["mae"] == pytest.approx(0.4 / 3)
    recs = truth.assign(score=[1.0, 0.5, 1.0])
    with pytest.raises(ConfigError, match=r"threshold=7 is outside the rating scale 0\.1\.\.0\.9"):
        receval.evaluate(recs, truth, ["precision@2"], threshold=7)
    # a metric with its own threshold does not read the global one
    res = receval.evaluate(recs, truth, ["precision@2(threshold=0.5)", "coverage@2"], threshold=7)
    assert res.summary["precision@2(threshold=0.5)"] == pytest.approx(0.5)  # a: y of x, y; b: x of x


def test_no_default_above_a_continuous_scale_through_zero() -> None:
    truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "x"], "rating": [-0.3, 0.25, 0.8]})
    predictions = truth.assign(prediction=[0.0, 0.25, 0.8])
    assert receval.evaluate(None, truth, ["mae"], predictions=predictions).summary["mae"] == pytest.approx(0.1)
    with pytest.raises(MetricError, match=r"all below the default relevance threshold 1 .*give threshold="):
        receval.evaluate(truth.assign(score=1.0), truth, ["precision@1"])


@pytest.mark.parametrize("metrics", [["rmse"], ["mae"], ["rmse", "mae"]])
def test_error_metrics_alone_take_ratings_below_one_without_a_threshold(tmp_path: Path, metrics: list[str]) -> None:
    """No threshold given and every rating below 1: RMSE and MAE do not read λ, so whatever the default λ of the
    scale they are scored, from Python and from the command line."""
    truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "x"], "rating": [0.1, 0.5, 0.9]})
    predictions = truth.assign(prediction=[0.3, 0.5, 0.6])
    want = {"rmse": math.sqrt((0.04 + 0 + 0.09) / 3), "mae": (0.2 + 0 + 0.3) / 3}
    res = receval.evaluate(None, truth, metrics, predictions=predictions)
    assert res.summary == pytest.approx({m: want[m] for m in metrics})
    predictions.to_csv(tmp_path / "p.csv", index=False)
    truth.to_csv(tmp_path / "t.csv", index=False)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = main(["evaluate", "--truth", str(tmp_path / "t.csv"), "--predictions", str(tmp_path / "p.csv"),
                       "--metrics", ",".join(metrics), "--json"])  # fmt: skip
    assert status == 0
    got = json.loads(out.getvalue())
    assert {m: got[m] for m in metrics} == pytest.approx({m: want[m] for m in metrics})


def test_paths_read_as_the_tables_they_hold(tmp_path: Path) -> None:
    run = tmp_path / "run.trec"
    run.write_text("a Q0 x 1 0.9 sys\na Q0 q 2 0.5 sys\nb Q0 z 1 0.9 sys\nb Q0 x 2 0.8 sys\n")
    test = tmp_path / "test.tsv"
    TRUTH.to_csv(test, sep="\t", index=False)
    from_files = receval.evaluate(run, str(test), ["ndcg@10", "precision@2"])
    in_memory = receval.evaluate(RECS, TRUTH, ["ndcg@10", "precision@2"])
    assert from_files.summary == in_memory.summary and from_files.summary["precision@2"] == pytest.approx(0.75)
    assert from_files.conventions == in_memory.conventions


def test_the_resolver_refuses_a_threshold_that_is_not_a_number():
    from receval.data.synthetic import generate
    from receval.errors import ConfigError
    from receval.evaluation import evaluate_model
    from receval.recommenders import make
    from receval.split import holdout

    with pytest.raises(ConfigError, match="negative_threshold=nan: give a finite number"):
        RatingScale(1, 5, 1).relevance(4, float("nan"))
    train, test = holdout(generate(40, 60, 800, seed=0), test_fraction=0.2, seed=0)
    # a ranker asked only error metrics scores nothing, yet reports the thresholds it was given: checked, not cast
    with pytest.raises(ConfigError, match="threshold=4: give a finite number"):
        evaluate_model(make("popularity"), train, test, ["rmse"], threshold="4")
