"""receval recommend / predict / algorithms."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from receval import Interactions
from receval.cli import main
from receval.recommenders import make, recommend


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    mask = rng.random((40, 25)) < 0.4
    mask[:, 0] = mask[0, :] = True
    u, i = np.nonzero(mask)
    frame = pd.DataFrame(
        {"user": [f"u{x}" for x in u], "item": [f"m{x}" for x in i], "rating": rng.integers(1, 6, len(u))}
    )
    test = rng.random(len(frame)) < 0.2
    test[(frame["user"] == "u0").to_numpy() & (frame["item"] == "m0").to_numpy()] = False
    frame[~test].to_csv(tmp_path / "train.csv", index=False)
    frame[test].to_csv(tmp_path / "test.tsv", sep="\t", index=False)
    return tmp_path


def test_recommend_writes_ranked_lists_with_original_ids(files, capsys):
    out = files / "recs.tsv"
    args = ["recommend", "--train", str(files / "train.csv"), "--algorithm", "item-knn"]
    assert main([*args, "--param", "k=10", "--param", "similarity=cosine", "--k", "5", "--out", str(out)]) == 0
    assert "recommendations" in capsys.readouterr().out
    recs = pd.read_csv(out, sep="\t")
    assert list(recs.columns) == ["user", "item", "score", "rank"]
    train = pd.read_csv(files / "train.csv")
    assert not recs.merge(train, on=["user", "item"]).shape[0]  # training items excluded
    assert (recs.groupby("user")["rank"].apply(lambda r: list(r) == list(range(1, len(r) + 1)))).all()
    assert recs.duplicated(["user", "item"]).sum() == 0
    data = Interactions.from_frame(train)
    items, _ = recommend(make("item-knn", k=10, similarity="cosine").fit(data), [0], 5, exclude=data)
    assert recs[recs["user"] == data.user_ids[0]]["item"].tolist() == data.item_ids[items[0][items[0] >= 0]].tolist()


def test_predict_and_unknown_policy(files, capsys):
    out = files / "pred.tsv"
    base = ["predict", "--train", str(files / "train.csv"), "--test", str(files / "test.tsv"), "--out", str(out)]
    assert main([*base, "--algorithm", "biases"]) == 0
    pred = pd.read_csv(out, sep="\t")
    assert list(pred.columns) == ["user", "item", "rating", "prediction"]
    train = Interactions.from_frame(pd.read_csv(files / "train.csv"))
    test = pd.read_csv(files / "test.tsv", sep="\t")
    expected = make("biases").fit(train).predict(train.user_index(test["user"]), train.item_index(test["item"]))
    np.testing.assert_allclose(pred["prediction"], expected, rtol=1e-5)
    # a test user absent from training
    pd.concat([test, pd.DataFrame({"user": ["new"], "item": ["m0"], "rating": [3]})]).to_csv(
        files / "test2.tsv", sep="\t", index=False
    )
    base[4] = str(files / "test2.tsv")
    capsys.readouterr()
    assert main([*base, "--algorithm", "mf", "--param", "epochs=2"]) == 2
    assert "absent from the training file (first: user 'new'" in capsys.readouterr().err
    assert main([*base, "--algorithm", "mf", "--param", "epochs=2", "--unknown", "drop"]) == 0
    assert len(pd.read_csv(out, sep="\t")) == len(test)
    assert main([*base, "--algorithm", "global-mean", "--unknown", "global-mean"]) == 0
    assert pd.read_csv(out, sep="\t")["prediction"].iloc[-1] == pytest.approx(train.ratings.mean(), rel=1e-5)


def test_cli_errors_leave_no_output(files, capsys):
    out = files / "never.tsv"
    train = ["--train", str(files / "train.csv"), "--out", str(out)]
    assert main(["recommend", *train, "--algorithm", "knn"]) == 2
    assert "unknown algorithm 'knn'" in capsys.readouterr().err
    assert main(["recommend", *train, "--algorithm", "popularity", "--k", "1000"]) == 2
    assert "larger than the catalogue" in capsys.readouterr().err
    assert main(["recommend", *train, "--algorithm", "mf", "--param", "factors=many"]) == 2
    assert "not a valid int" in capsys.readouterr().err
    assert main(["predict", *train, "--test", str(files / "test.tsv"), "--algorithm", "popularity"]) == 2
    assert "does not predict ratings" in capsys.readouterr().err
    assert not out.exists()
    assert not [p for p in files.iterdir() if p.name.endswith(".tmp")]


def test_algorithms_lists_names_and_defaults(capsys):
    assert main(["algorithms"]) == 0
    text = capsys.readouterr().out
    for name in ("random", "popularity", "average", "global-mean", "biases", "user-knn", "item-knn", "mf", "hkv"):
        assert f"\n{name} " in f"\n{text}"
    assert "similarity=auto" in text and "surprise:<Class>" in text


def test_predictions_feed_receval_evaluate(files, capsys):
    out = files / "pred.tsv"
    test = str(files / "test.tsv")
    assert (
        main(["predict", "--train", str(files / "train.csv"), "--test", test, "-a", "biases", "--out", str(out)]) == 0
    )
    capsys.readouterr()
    assert main(["evaluate", "--truth", test, "--predictions", str(out), "--metrics", "rmse", "--json"]) == 0
    reported = json.loads(capsys.readouterr().out)["rmse"]
    pred = pd.read_csv(out, sep="\t")
    assert reported == pytest.approx(np.sqrt(np.mean((pred["prediction"] - pred["rating"]) ** 2)), rel=1e-5)
