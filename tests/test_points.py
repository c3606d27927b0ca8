"""Next-item evaluation points: hand-computed toy sequences, agreement with evaluate, refusals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from receval import validate
from receval.errors import ConfigError, DataError
from receval.evaluation import evaluate
from receval.evaluation.points import evaluate_points

# user a: history x@1, y@2; points at t=3 (truth x: a repeat) and t=4 (truth z: new)
# user b: history y@1; point at t=2 (truth w: new)
HISTORY = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"], "timestamp": [1, 2, 1]})
TRUTH = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "z", "w"], "timestamp": [3, 4, 2]})
RECS = pd.DataFrame(
    {
        "user": ["a", "a", "a", "a", "a", "b", "b"],
        "timestamp": [3, 3, 3, 4, 4, 2, 2],
        "item": ["y", "x", "z", "x", "z", "y", "w"],
        "score": [3.0, 2.0, 1.0, 2.0, 1.0, 2.0, 1.0],
    }
)


def test_hand_computed_hits_by_event_and_by_user():
    # hr@2: a@3 [y, x] hit; a@4 [x, z] hit; b@2 [y, w] hit -> 1; hr@1: a@3 y miss, a@4 x miss, b@2 y miss -> 0
    res = evaluate_points(RECS, TRUTH, ["hr@1", "hr@2", "mrr"], history=HISTORY)
    assert res.summary["hr@2"] == 1.0 and res.summary["hr@1"] == 0.0
    # mrr: 1/2, 1/2, 1/2
    assert res.summary["mrr"] == pytest.approx(0.5)
    assert res.per_point[["user", "point"]].values.tolist() == [["a", 3], ["a", 4], ["b", 2]]


def test_excluding_history_reranks_each_point_by_hand():
    # a@3: y (t=2) and x (t=1) seen before 3 -> [z]: miss of x; a@4: x seen -> [z] hit; b@2: y seen -> [w] hit
    res = evaluate_points(RECS, TRUTH, "hr@1", history=HISTORY, exclude_history=True)
    assert res.per_point["hr@1"].tolist() == [0.0, 1.0, 1.0]
    assert res.summary["hr@1"] == pytest.approx(2 / 3)
    by_user = evaluate_points(RECS, TRUTH, "hr@1", history=HISTORY, exclude_history=True, weighting="user")
    assert by_user.summary["hr@1"] == pytest.approx((0.5 + 1.0) / 2)


def test_repeat_and_new_items_by_hand():
    # repeat truth: only a@3's x (seen at 1); its list [y, x, z]: hr@1 0, hr@2 1
    only = evaluate_points(RECS, TRUTH, ["hr@1", "hr@2"], history=HISTORY, repeat="only")
    assert only.summary == {"hr@1": 0.0, "hr@2": 1.0} and only.points_without_truth == 2
    assert only.per_point["user"].tolist() == ["a"]
    # new truth: a@4's z ([x, z]: hr@2 1) and b@2's w ([y, w]: hr@2 1)
    new = evaluate_points(RECS, TRUTH, ["hr@2"], history=HISTORY, repeat="exclude")
    assert new.summary == {"hr@2": 1.0} and new.points_evaluated == 2 and new.points_without_truth == 1


def test_one_point_per_user_is_evaluate():
    rng = np.random.default_rng(0)
    n_users, n_items = 40, 15
    truth = pd.DataFrame({"user": np.arange(n_users), "item": rng.integers(0, n_items, n_users), "timestamp": 10})
    truth["rating"] = 1
    rows = [(u, i, float(s)) for u in range(n_users) for i, s in enumerate(rng.random(n_items)) if s > 0.3]
    recs = pd.DataFrame(rows, columns=["user", "item", "score"]).assign(timestamp=10)
    metrics = ["ndcg@5", "recall@3", "mrr", "precision@10"]
    points = evaluate_points(recs, truth, metrics)
    plain = evaluate(recs.drop(columns="timestamp"), truth.drop(columns="timestamp"), metrics)
    assert points.summary == pytest.approx(plain.summary)
    assert points.summary == pytest.approx(evaluate_points(recs, truth, metrics, weighting="user").summary)


def test_event_and_user_weighting_differ_as_the_means_do():
    # user 1 has three points, user 2 one; values by point: 1, 1, 1 (user 1) and 0 (user 2)
    truth = pd.DataFrame({"user": [1, 1, 1, 2], "point": ["p", "q", "r", "s"], "item": ["x", "x", "x", "x"]})
    recs = pd.DataFrame({"user": [1, 1, 1, 2], "point": ["p", "q", "r", "s"], "item": ["x", "x", "x", "y"]})
    recs["rank"] = 1
    assert evaluate_points(recs, truth, "hr@1").summary["hr@1"] == 0.75
    assert evaluate_points(recs, truth, "hr@1", weighting="user").summary["hr@1"] == 0.5


def test_a_point_without_history_is_refused():
    truth = pd.concat([TRUTH, pd.DataFrame({"user": ["c"], "item": ["x"], "timestamp": [5]})], ignore_index=True)
    with pytest.raises(DataError, match=r"^evaluation point \('c', timestamp=5\) has no history"):
        evaluate_points(RECS, truth, "hr@1", history=HISTORY, repeat="exclude")


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"weighting": "session"}, "weighting must be 'event' or 'user'"),
        ({"repeat": "some"}, "repeat must be"),
        ({"repeat": "only", "exclude_history": True, "history": HISTORY}, "use one"),
        ({"repeat": "only"}, "need history="),
    ],
)
def test_bad_options_are_one_line_errors(options, match):
    with pytest.raises(ConfigError, match=match):
        evaluate_points(RECS, TRUTH, "hr@1", **options)


def test_tables_without_a_point_key_are_refused():
    with pytest.raises(ConfigError, match="key the recommendations and the truth by evaluation point"):
        evaluate_points(RECS.drop(columns="timestamp"), TRUTH, "hr@1")


def test_a_million_points_beyond_memory_is_a_refusal_not_a_crash(monkeypatch):
    n = 1_000_000
    users = np.arange(n) // 10
    truth = pd.DataFrame({"user": users, "item": np.arange(n) % 50, "timestamp": np.arange(n) % 10})
    recs = truth.assign(score=1.0)
    monkeypatch.setattr(validate, "available_memory", lambda: 50_000_000)  # 50 MB free
    with pytest.raises(ConfigError, match=r"^evaluating 1,000,000 points with lists of 10 needs .* of memory"):
        evaluate_points(recs, truth, "ndcg@10")


def test_the_cli_evaluates_points_as_python_does(tmp_path, capsys):
    import json

    from receval.cli import main

    HISTORY.to_csv(tmp_path / "h.csv", index=False)
    TRUTH.to_csv(tmp_path / "t.csv", index=False)
    RECS.to_csv(tmp_path / "r.csv", index=False)
    files = ["--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "r.csv"), "--train", str(tmp_path / "h.csv")]
    args = ["evaluate", *files, "--metrics", "hit_rate@1,hit_rate@2", "--points", "--json"]
    assert main([*args, "--exclude-history", "--weighting", "user"]) == 0
    body = json.loads(capsys.readouterr().out)
    expected = evaluate_points(RECS, TRUTH, ["hit_rate@1", "hit_rate@2"], history=HISTORY, exclude_history=True,
                               weighting="user")  # fmt: skip
    assert body["hit_rate@1"] == pytest.approx(expected.summary["hit_rate@1"]) == 0.75
    assert body["conventions"]["weighting"] == "user" and body["conventions"]["points_evaluated"] == 3
    assert main([*args, "--repeat", "exclude", "--per-user", str(tmp_path / "p.csv")]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["conventions"]["points_without_truth"] == 1
    assert pd.read_csv(tmp_path / "p.csv")["point"].tolist() == [4, 2]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--repeat", "only"], "error: --weighting, --repeat and --exclude-history apply to evaluation points"),
        (["--points", "--weighting", "session"], "error: --weighting 'session' is not one of event, user"),
        (["--points", "--repeat", "some"], "error: --repeat 'some' is not one of only, exclude"),
        (["--points", "--exclude-history"], "error: --repeat and --exclude-history need --train FILE"),
    ],
)
def test_the_cli_refuses_bad_point_options_with_exit_2(tmp_path, capsys, extra, message):
    from receval.cli import main

    TRUTH.to_csv(tmp_path / "t.csv", index=False)
    RECS.to_csv(tmp_path / "r.csv", index=False)
    args = ["evaluate", "--truth", str(tmp_path / "t.csv"), "--recs", str(tmp_path / "r.csv"), "--metrics", "mrr"]
    assert main([*args, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(message) and err.count("\n") == 0
