"""Tuning on MovieLens 100K u1 (test_path = u1.test): the test values equal an independent evaluation of the files."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("optuna")

from receval.data import load
from receval.evaluation import evaluate
from receval.experiment.config import load_config
from receval.experiment.tune import tune_experiment
from receval.recommenders import make
from receval.recommenders.topn import recommend

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tune_ml100k.toml"


def _config(tmp_path: Path, ml100k: Path) -> Path:
    text = f"""
metrics = ["ndcg@10", "recall@10"]
[datasets.u1]
path = "{(ml100k / "u1.base").as_posix()}"
format = "movielens-100k"
[protocol]
name = "one-shot"
k = 10
threshold = 4
[tune]
trials = 3
seed = 0
test_path = "{(ml100k / "u1.test").as_posix()}"
[tune.validation]
method = "per-user"
test_fraction = 0.2
min_train = 1
[recommenders.popularity]
space = {{ threshold = {{ float = [1, 5] }} }}
"""
    path = tmp_path / "u1.toml"
    path.write_text(text)
    return path


@pytest.mark.realdata
@pytest.mark.slow
def test_u1_tuned_and_default_equal_an_evaluation_of_the_files(tmp_path, ml100k_dir):
    report = tune_experiment(_config(tmp_path, ml100k_dir), out=tmp_path / "out")
    res = report.summary["algorithms"]["u1/popularity"]
    assert res["trials"] == 3 and report.summary["test_split"]["test_path"].endswith("u1.test")
    train = load(ml100k_dir / "u1.base", "movielens-100k")  # its own id space: the files as a user has them
    truth = load(ml100k_dir / "u1.test", "movielens-100k")
    for params, key in ((res["best_params"], "test_metrics"), ({}, "default_test_metrics")):
        model = make("popularity", **params).fit(train)
        users = train.user_index(truth.user_ids[truth.users])
        items, _ = recommend(model, sorted(set(users)), 10, exclude=train, seed=0)
        lists = pd.DataFrame(
            {
                "user": train.user_ids[sorted(set(users))].repeat(10),
                "item": train.item_ids[items.ravel()],
                "rank": list(range(1, 11)) * len(set(users)),
            }
        )
        expected = evaluate(lists, truth, ["ndcg@10", "recall@10"], train=train, threshold=4).summary
        # The seeded tie-break draws one key per item of the catalogue, which holds the 32 items only
        # u1.test has in the tuning run: a list whose 10th place is a tie may end in another item
        # (2 of 459 users here), the rest is the same.
        assert res[key]["ndcg@10"] == pytest.approx(expected["ndcg@10"], abs=1e-3)
        assert res[key]["recall@10"] == pytest.approx(expected["recall@10"], abs=1e-3)
    per_user = report.test_per_user
    tuned = per_user[(per_user["system"] == "default") & (per_user["metric"] == "ndcg@10")]
    assert len(tuned) == truth.n_users == 459  # every test user, none dropped by the join


def test_the_example_tunes_item_knn_ease_and_rp3beta_with_one_budget():
    cfg = load_config(EXAMPLE)
    assert {"item-knn", "ease", "rp3beta"} <= {r.algorithm for r in cfg.recommenders.values()}
    assert cfg.tune is not None and cfg.tune.test_path and all(r.trials is None for r in cfg.recommenders.values())
    assert all(r.space for r in cfg.recommenders.values())
