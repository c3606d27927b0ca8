"""``receval coherence`` / ``barrier`` / ``coherence-split`` on generic CSV files."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from receval.cli import main


@pytest.fixture
def example_files(tmp_path):
    # the paper's Figure 1 users; "ah" is Action and Horror
    ratings = pd.DataFrame(
        {
            "user": ["u1"] * 6 + ["u2"] * 6 + ["u3"],
            "item": ["a1", "a2", "ah", "h", "c1", "c2"] * 2 + ["x"],
            "rating": [4, 4, 3, 3, 1, 2, 4, 3, 5, 2, 1, 5, 3],
        }
    )
    aspects = pd.DataFrame(
        {
            "item": ["a1", "a2", "ah", "h", "c1", "c2", "unrated"],
            "aspect": ["Action"] * 2 + ["Action|Horror"] + ["Horror", "Comedy", "Comedy", "Drama"],
        }
    )
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    aspects.to_csv(tmp_path / "aspects.csv", index=False)
    return tmp_path


def test_coherence_json(example_files, capsys):
    args = ["coherence", "--data", str(example_files / "ratings.csv"), "--format", "csv"]
    args += ["--aspects", str(example_files / "aspects.csv")]
    assert main([*args, "--gamma", "std", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {k: round(v, 2) for k, v in out["users"].items()} == {"u1": -1.28, "u2": -5.95}
    assert out["undefined_users"] == ["u3"] and out["n_undefined"] == 1 and out["gamma"] == "std"
    assert main([*args, "--json"]) == 0  # default gamma: weighted std
    out = json.loads(capsys.readouterr().out)
    assert {k: round(v, 2) for k, v in out["users"].items()} == {"u1": -0.52, "u2": -2.15}
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "least coherent" in text and "u2" in text


def test_coherence_errors(example_files, capsys):
    args = ["coherence", "--data", str(example_files / "ratings.csv"), "--format", "csv"]
    assert main(args) == 2  # no attributes
    assert "attributes" in capsys.readouterr().err
    assert main([*args, "--aspects", str(example_files / "aspects.csv"), "--gamma", "var"]) == 2
    assert "gamma" in capsys.readouterr().err


def test_barrier_json_and_overfitting_flag(tmp_path, capsys):
    rng = np.random.default_rng(0)
    users = np.repeat(np.arange(20), 10 * 3)
    items = np.tile(np.repeat(np.arange(10), 3), 20)
    ratings = np.clip(np.round(3 + rng.normal(0, 1, len(users))), 1, 5)
    pd.DataFrame({"user": users, "item": items, "rating": ratings}).to_csv(tmp_path / "r.csv", index=False)
    args = ["barrier", "--data", str(tmp_path / "r.csv"), "--format", "csv", "--bootstrap", "50"]
    assert main([*args, "--ddof", "1", "--json", "--rmse", "0.1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["users"]) == 20 and out["ddof"] == 1 and out["n_pairs"] == 200
    assert out["system_ci"][0] < out["system"] < out["system_ci"][1]
    assert out["overfitting"][0]["flagged"] is True
    # per-user predictions far off: no flag, reported in the plain output
    pred = pd.DataFrame({"user": np.arange(20), "item": 0, "rating": 1.0, "prediction": 5.0})
    pred.to_csv(tmp_path / "pred.tsv", sep="\t", index=False)
    assert main([*args, "--predictions", str(tmp_path / "pred.tsv")]) == 0
    text = capsys.readouterr().out
    assert "magic barrier" in text and "ok: RMSE 4.0000" in text
    assert main([*args, "--rmse", "0.01"]) == 0
    assert "WARNING overfitting" in capsys.readouterr().out


def test_barrier_without_reratings(example_files, capsys):
    assert main(["barrier", "--data", str(example_files / "ratings.csv"), "--format", "csv"]) == 2
    err = capsys.readouterr().err
    assert "repeated ratings" in err and "coherence" in err


def test_coherence_split_cli(tmp_path, capsys):
    from receval.data.synthetic import generate

    data = generate(n_users=60, n_items=80, n_ratings=2_400, n_aspects=6, seed=2)
    data.to_frame().to_csv(tmp_path / "r.csv", index=False)
    a = data.aspects.tocoo()
    pd.DataFrame({"item": data.item_ids[a.row], "aspect": data.aspect_names[a.col]}).to_csv(
        tmp_path / "g.csv", index=False
    )
    args = [
        "coherence-split",
        "--data",
        str(tmp_path / "r.csv"),
        "--format",
        "csv",
        "--aspects",
        str(tmp_path / "g.csv"),
    ]
    args += ["--models", "biases,global-mean", "--folds", "2"]
    assert main([*args, "--p", "0.3,0.7", "--out", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    assert "▲" in text and "▼" in text and "All-Easy" in text
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"table.csv", "rmse.csv", "figure.png"}
    table = pd.read_csv(tmp_path / "out" / "table.csv")
    assert len(table) == 4 and set(table["recommender"]) == {"biases", "global-mean"}
    assert main([*args, "--p", "0.5,1.5"]) == 2
    assert "strictly between 0 and 1" in capsys.readouterr().err
    assert main([*args, "--models", "nonsense"]) == 2
