"""``receval sampled``: bad options are one line and exit 2 before any work; JSON and the report on generated data."""

from __future__ import annotations

import json

import pytest

from receval.cli.app import main
from receval.data.synthetic import generate


@pytest.fixture(scope="module")
def ratings_csv(tmp_path_factory):
    data = generate(n_users=80, n_items=300, n_ratings=4000, n_aspects=0, user_activity_sigma=0.5, seed=3)
    path = tmp_path_factory.mktemp("sampled") / "ratings.csv"
    data.to_frame()[["user", "item", "rating", "timestamp"]].to_csv(path, index=False)
    return path


FAST = ["--algorithms", "popularity,item-knn,random", "--n", "50", "--repeats", "3"]


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--n", "0"], ["--n 0", "at least 1"]),
        (["--repeats", "0"], ["--repeats 0", "at least 1"]),
        (["--sampling", "zipf"], ["--sampling", "uniform, popularity"]),
        (["--shape", "per-row"], ["--shape", "per-item, per-user"]),
        (["--corrections", "lsq"], ["--corrections", "none, ls, bv"]),
        (["--sampling", "popularity", "--corrections", "bv"], ["bv", "uniformly sampled", "--sampling"]),
        (["--metrics", "fallout@10"], ["fallout@10", "--metrics", "no sampled form"]),
        (["--metrics", "ndcg"], ["ndcg", "needs a cutoff"]),
        (["--algorithms", "popularity,itemknn"], ["'itemknn'", "--algorithms", "did you mean 'item-knn'"]),
        (["--algorithms", "popularity"], ["--algorithms", "at least 2"]),
        (["--split", "fold"], ["unknown split method 'fold'"]),
        (["--seed", "-1"], ["--seed -1"]),
        (["--exponent", "-1"], ["--exponent -1"]),
    ],
)
def test_bad_option_is_one_line_before_any_work(tmp_path, capsys, args, words):
    out = tmp_path / "report"
    # a data path that does not exist: an option error must come before the data is read
    code = main(["sampled", "--data", str(tmp_path / "absent.csv"), "--format", "csv", *args, "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err
    for word in words:
        assert word in err, (word, err)
    assert not out.exists()


def test_bad_option_under_json_is_a_json_error(tmp_path, capsys):
    code = main(["sampled", "--data", str(tmp_path / "absent.csv"), "--format", "csv", "--n", "0", "--json"])
    assert code == 2
    assert "--n 0" in json.loads(capsys.readouterr().out)["error"]


def test_missing_data_file_is_named(tmp_path, capsys):
    assert main(["sampled", "--data", str(tmp_path / "absent.csv"), "--format", "csv"]) == 2
    assert "absent.csv" in capsys.readouterr().err


def test_sample_larger_than_the_items_available_names_a_user(ratings_csv, capsys):
    assert main(["sampled", "--data", str(ratings_csv), "--format", "csv", *FAST[:2], "--n", "300"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "user" in err and err.count("\n") == 1


def test_json_has_tau_and_error_for_ndcg_with_sampled_and_bv(ratings_csv, capsys, tmp_path):
    args = ["sampled", "--data", str(ratings_csv), "--format", "csv", *FAST, "--metrics", "recall@10", "--json"]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["metric"] == "ndcg@10"  # --json adds nDCG@10 when --metrics lacks it
    assert {"sampled", "bv"} <= set(out["kendall_tau"]) and {"sampled", "bv"} <= set(out["error"])
    for estimate, tau in out["kendall_tau"].items():
        assert tau is None or -1 <= tau <= 1, estimate
    assert all(v >= 0 for v in out["error"].values())
    assert set(out["metrics"]) == {"ndcg@10", "recall@10"}
    assert set(out["systems"]["ndcg@10"]) == {"popularity", "item-knn", "random"}
    assert out["conventions"]["sample"]["n"] == 50 and len(out["conventions"]["sample"]["seeds"]) == 3
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert {"values.csv", "summary.csv", "kendall.csv", "estimates.png", "tau.png", "report.html"} <= written


def test_text_output_has_the_tables(ratings_csv, capsys):
    assert main(["sampled", "--data", str(ratings_csv), "--format", "csv", *FAST, "--corrections", "none,bv"]) == 0
    out = capsys.readouterr().out
    assert "Kendall tau" in out and "Mean absolute error" in out and "popularity" in out and "bv" in out


def test_popularity_sampling_defaults_to_the_uncorrected_value(ratings_csv, capsys):
    args = ["sampled", "--data", str(ratings_csv), "--format", "csv", *FAST, "--sampling", "popularity", "--json"]
    assert main(args) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["error"]) == ["sampled"]
    assert out["conventions"]["sample"]["sampling"] == "popularity"
