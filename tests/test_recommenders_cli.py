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


def test_recommend_only_for_test_or_listed_users(files, capsys):
    train = pd.read_csv(files / "train.csv")
    test = pd.read_csv(files / "test.tsv", sep="\t")
    extra = pd.DataFrame({"user": ["newcomer"], "item": ["m0"], "rating": [4]})  # not a training user
    pd.concat([test, extra]).to_csv(files / "test2.tsv", sep="\t", index=False)
    base = ["recommend", "--train", str(files / "train.csv"), "--algorithm", "popularity", "--k", "3"]
    assert main([*base, "--test", str(files / "test2.tsv"), "--out", str(files / "a.tsv")]) == 0
    assert "1 test users are not in the training file" in capsys.readouterr().out
    recs = pd.read_csv(files / "a.tsv", sep="\t")
    assert set(recs["user"]) == set(test["user"]) and set(test["user"]) < set(train["user"])
    # the same lists as for every training user, restricted
    assert main([*base, "--out", str(files / "all.tsv")]) == 0
    everyone = pd.read_csv(files / "all.tsv", sep="\t")
    pd.testing.assert_frame_equal(recs, everyone[everyone["user"].isin(test["user"])].reset_index(drop=True))
    (files / "users.txt").write_text("user\nu3\n\nu1\nu3\n")
    assert main([*base, "--users", str(files / "users.txt"), "--out", str(files / "b.tsv")]) == 0
    assert sorted(set(pd.read_csv(files / "b.tsv", sep="\t")["user"])) == ["u1", "u3"]
    capsys.readouterr()
    (files / "bad.txt").write_text("u1\nnobody\n")
    assert main([*base, "--users", str(files / "bad.txt"), "--out", str(files / "c.tsv")]) == 2
    err = capsys.readouterr().err
    assert "bad.txt, line 2" in err and "'nobody' is not in the training file" in err
    assert main([*base, "--users", str(files / "users.txt"), "--test", str(files / "test.tsv"), "--out", "x"]) == 2
    assert not (files / "c.tsv").exists()


def test_recommend_headerless_movielens_split_files(tmp_path):
    pairs = [(u, i) for u in range(1, 9) for i in range(1, 13) if (u + i) % 3]
    rows = [(u, i, 1 + (u * 7 + i) % 5, 880000000 + u * 100 + i) for u, i in pairs]
    frame = pd.DataFrame(rows)
    held = (frame[0] + frame[1]) % 4 == 0
    frame[~held].to_csv(tmp_path / "u1.base", sep="\t", header=False, index=False)
    frame[held].to_csv(tmp_path / "u1.test", sep="\t", header=False, index=False)
    args = ["recommend", "--train", str(tmp_path / "u1.base"), "--test", str(tmp_path / "u1.test")]
    out = tmp_path / "recs.tsv"
    assert main([*args, "--format", "movielens-100k", "--algorithm", "item-knn", "--k", "2", "--out", str(out)]) == 0
    recs = pd.read_csv(out, sep="\t")
    assert set(recs["user"]) == set(frame[held][0])
    seen = set(zip(frame[~held][0], frame[~held][1], strict=True))
    assert not any((u, i) in seen for u, i in zip(recs["user"], recs["item"], strict=True))
