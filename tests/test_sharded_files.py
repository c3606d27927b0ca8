"""Sharded evaluation of Parquet files equals one evaluation, bit for bit, locally and on Dask."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from receval.cli import main
from receval.errors import ConfigError, DataError, MetricError
from receval.evaluation import evaluate
from receval.evaluation.sharded_files import evaluate_parquet_sharded, plan_shards

METRICS = ["ndcg@10", "precision@5", "recall@20", "map@20", "mrr", "auc", "hits@10(agg=sum)"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Truth of users 0..599 and a run of users 40..639 (40 users without truth, 40 truth users without a list)."""
    folder = tmp_path_factory.mktemp("shards")
    rng = np.random.default_rng(7)
    truth = pd.DataFrame(
        {
            "user": np.repeat(np.arange(600), 6),
            "item": rng.integers(0, 120, 3600),
            "rating": rng.integers(1, 6, 3600).astype(float),
        }
    ).drop_duplicates(["user", "item"])
    run = pd.DataFrame({"user": np.repeat(np.arange(40, 640), 25), "item": rng.integers(0, 150, 15000),
                        "score": rng.random(15000).round(2)}).drop_duplicates(["user", "item"])  # fmt: skip
    truth.to_parquet(folder / "truth.parquet", row_group_size=500)
    run.to_parquet(folder / "run.parquet", row_group_size=1000)
    return folder, truth, run


def _one_evaluation(truth: pd.DataFrame, run: pd.DataFrame):
    as_text = {"user": str, "item": str}  # as receval evaluate reads every file
    with pytest.warns(UserWarning, match="40 user"):
        return evaluate(run.astype(as_text), truth.astype(as_text), METRICS, threshold=4)


@pytest.mark.parametrize("n_shards", [1, 3, 7])
def test_shards_equal_one_evaluation_bit_for_bit(files, n_shards):
    folder, truth, run = files
    expected = _one_evaluation(truth, run)
    got = evaluate_parquet_sharded(folder / "truth.parquet", folder / "run.parquet", METRICS, threshold=4,
                                   n_shards=n_shards)  # fmt: skip
    assert got.summary == expected.summary  # exact: same per-user values summed in the same order
    pd.testing.assert_frame_equal(got.per_user, expected.per_user)
    for key in ("users_evaluated", "users_without_list", "users_dropped_not_in_truth", "users_scored"):
        assert getattr(got.conventions, key) == getattr(expected.conventions, key), key
    assert got.conventions.users_dropped_not_in_truth == 40 and got.conventions.users_without_list == 40


def test_plan_covers_every_user_once(files):
    folder, _, run = files
    plan = plan_shards(folder / "run.parquet", 4)
    assert plan[0][0] is None and plan[-1][1] is None and len(plan) == 4
    inside = [run["user"].between(a if a is not None else -1, b if b is not None else 10**9, inclusive="right")
              for a, b in plan]  # fmt: skip
    assert (sum(mask.astype(int) for mask in inside) == 1).all()


def test_local_processes_and_cli_give_the_same_numbers(files):
    folder, truth, run = files
    expected = _one_evaluation(truth, run).summary
    got = evaluate_parquet_sharded(folder / "truth.parquet", folder / "run.parquet", METRICS, threshold=4, n_shards=5,
                                   jobs=2)  # fmt: skip
    assert got.summary == expected
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()) as out:
        status = main(["evaluate", "--truth", str(folder / "truth.parquet"), "--recs", str(folder / "run.parquet"),
                       "--metrics", ",".join(METRICS), "--threshold", "4", "--shards", "3", "--json"])  # fmt: skip
    body = json.loads(out.getvalue())
    assert status == 0 and body["conventions"]["shards"] == 3
    assert {name: body[name] for name in METRICS} == expected


def test_dask_cluster_gives_bit_identical_results(files):
    distributed = pytest.importorskip("distributed")
    folder, _, _ = files
    local = evaluate_parquet_sharded(folder / "truth.parquet", folder / "run.parquet", METRICS, threshold=4,
                                     n_shards=4)  # fmt: skip
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        on_dask = evaluate_parquet_sharded(
            folder / "truth.parquet",
            folder / "run.parquet",
            METRICS,
            threshold=4,
            n_shards=4,
            executor="dask",
            scheduler=cluster.scheduler_address,
        )
    assert on_dask.summary == local.summary
    pd.testing.assert_frame_equal(on_dask.per_user, local.per_user)


def test_refuses_what_shards_cannot_compute(files, tmp_path):
    folder, _, _ = files
    truth, run = folder / "truth.parquet", folder / "run.parquet"
    with pytest.raises(MetricError, match=r"novelty@10.*training data"):
        evaluate_parquet_sharded(truth, run, ["novelty@10"], n_shards=2)
    with pytest.raises(MetricError, match="aggregation is micro"):
        evaluate_parquet_sharded(truth, run, ["recall@10(agg=micro)"], n_shards=2)
    (tmp_path / "r.tsv").write_text("user\titem\tscore\n1\t2\t0.5\n")
    with pytest.raises(DataError, match=r"r\.tsv.*not a readable Parquet file"):
        evaluate_parquet_sharded(truth, tmp_path / "r.tsv", ["mrr"], n_shards=2)
    pd.DataFrame({"user": ["1"], "item": [2], "score": [0.5]}).to_parquet(tmp_path / "s.parquet")
    with pytest.raises(DataError, match="different types"):
        evaluate_parquet_sharded(truth, tmp_path / "s.parquet", ["mrr"], n_shards=2)


def test_bad_options_name_the_option(files, capsys):
    folder, _, _ = files
    truth, run = folder / "truth.parquet", folder / "run.parquet"
    with pytest.raises(ConfigError, match="n_shards=0 is too few: give at least n_shards=1"):
        evaluate_parquet_sharded(truth, run, ["mrr"], n_shards=0)
    with pytest.raises(ConfigError, match="jobs=0: give an integer of at least 1"):
        evaluate_parquet_sharded(truth, run, ["mrr"], n_shards=2, jobs=0)
    with pytest.raises(ConfigError, match="executor='dask' needs scheduler="):
        evaluate_parquet_sharded(truth, run, ["mrr"], n_shards=2, executor="dask")
    status = main(["evaluate", "--truth", str(truth), "--recs", str(run), "--metrics", "mrr", "--jobs", "2"])
    assert status == 2 and "add --shards N" in capsys.readouterr().err
    # the same messages on the command line, with its flags
    for extra, shown in (
        (["--shards", "0"], "--shards 0 is too few: give at least --shards 1"),
        (["--shards", "2", "--jobs", "0"], "--jobs 0: give an integer of at least 1"),
        (["--shards", "2", "--executor", "dask"], "--executor dask needs --scheduler (the address"),
    ):
        status = main(["evaluate", "--truth", str(truth), "--recs", str(run), "--metrics", "mrr", *extra])
        err = capsys.readouterr().err
        assert status == 2 and shown in err and "=" not in err.split(":", 1)[1].split("(")[0], err
