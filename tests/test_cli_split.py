"""receval split writes files every command reads back; split -> recommend --test -> evaluate with no hand editing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from receval.cli import main
from receval.data import load
from receval.data.synthetic import generate
from receval.data.tables import read_table
from receval.split import kfold_per_user, per_user_holdout


def _ml100k_folder(tmp_path: Path, seed: int = 0) -> Path:
    """A generated data set in the MovieLens 100K layout (u.data: tab-separated, no header)."""
    data = generate(n_users=80, n_items=120, n_ratings=2_400, seed=seed)
    frame = data.to_frame()
    frame["timestamp"] = 880_000_000 + np.arange(len(frame))
    folder = tmp_path / "ml"
    folder.mkdir()
    frame[["user", "item", "rating", "timestamp"]].astype({"rating": int}).to_csv(
        folder / "u.data", sep="\t", header=False, index=False
    )
    return folder


def test_split_files_equal_the_library_split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _ml100k_folder(tmp_path)
    out = tmp_path / "split"
    argv = ["split", str(folder), "--format", "ml-100k", "--method", "per-user", "--seed", "7"]
    assert main([*argv, "--out", str(out)]) == 0
    train, test = per_user_holdout(load(folder, "movielens-100k"), 0.2, seed=7)
    for name, part in (("train", train), ("test", test)):
        written = pd.read_csv(out / f"{name}.tsv", sep="\t")
        assert list(written.columns) == ["user", "item", "rating", "timestamp"]
        expected = part.to_frame()[["user", "item", "rating", "timestamp"]]
        np.testing.assert_array_equal(written["user"].astype(str), expected["user"].astype(str))
        np.testing.assert_array_equal(written["item"].astype(str), expected["item"].astype(str))
        np.testing.assert_array_equal(written["rating"], expected["rating"])
        np.testing.assert_array_equal(written["timestamp"], expected["timestamp"])
    assert "train: " in capsys.readouterr().out


def test_kfold_writes_one_folder_per_fold(tmp_path: Path) -> None:
    folder = _ml100k_folder(tmp_path, seed=1)
    out = tmp_path / "cv"
    argv = ["split", str(folder), "--format", "ml-100k", "--method", "kfold", "--folds", "3"]
    assert main([*argv, "--out", str(out)]) == 0
    folds = kfold_per_user(load(folder, "movielens-100k"), 3, seed=0)
    for number, (_, test) in enumerate(folds, start=1):
        assert len(read_table(out / f"fold-{number}" / "test.tsv", "truth")) == len(test)
    assert sorted(p.name for p in out.iterdir()) == ["fold-1", "fold-2", "fold-3"]


def test_a_new_split_replaces_the_old_set_whole(tmp_path: Path) -> None:
    """5 folds, then 3: folds 4 and 5 go with the old set (a user's own file stays); a holdout then drops the folds."""
    folder = _ml100k_folder(tmp_path, seed=2)
    out = tmp_path / "cv"
    argv = ["split", str(folder), "--format", "ml-100k", "--out", str(out)]
    assert main([*argv, "--method", "kfold", "--folds", "5"]) == 0
    (out / "fold-5" / "notes.txt").write_text("mine")
    (out / "fold-x").mkdir()
    (out / "fold-x" / "train.tsv").write_text("not a fold of receval's")
    assert main([*argv, "--method", "kfold", "--folds", "3"]) == 0
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    kept = ["fold-5/notes.txt", "fold-x/train.tsv"]
    assert files == sorted([f"fold-{n}/{name}.tsv" for n in (1, 2, 3) for name in ("test", "train")] + kept)
    assert not (out / "fold-4").exists()
    assert main([*argv, "--method", "holdout"]) == 0
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == sorted(["test.tsv", "train.tsv", *kept])


def test_split_recommend_evaluate_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _ml100k_folder(tmp_path, seed=2)
    out = tmp_path / "split"
    assert main(["split", str(folder), "--format", "ml-100k", "--method", "per-user", "--out", str(out)]) == 0
    recs = tmp_path / "recs.tsv"
    argv = ["recommend", "--train", str(out / "train.tsv"), "--test", str(out / "test.tsv")]
    assert main([*argv, "--algorithm", "popularity", "--k", "10", "--out", str(recs)]) == 0
    capsys.readouterr()
    argv = ["evaluate", "--truth", str(out / "test.tsv"), "--recs", str(recs), "--metrics", "precision@10,ndcg@10"]
    assert main([*argv, "--threshold", "4", "--train", str(out / "train.tsv"), "--json"]) == 0
    values = json.loads(capsys.readouterr().out)
    assert set(values) == {"precision@10", "ndcg@10", "conventions"} and 0 < values["precision@10"] <= 1


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--method", "random"], "--method: unknown split method 'random'; use one of holdout, per-user"),
        (["--test-fraction", "1.5"], "--test-fraction 1.5: give a number strictly between 0 and 1"),
        (["--test-fraction", "0"], "--test-fraction 0: give a number strictly between 0 and 1"),
        (["--folds", "1"], "--folds 1: give an integer of at least 2"),
        (["--seed", "-1"], "--seed -1: a seed is an integer from 0"),
        (["--seed", str(2**32)], "--seed 4294967296: a seed is an integer from 0 to 4294967295"),
    ],
)
def test_bad_options_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    folder = _ml100k_folder(tmp_path)
    out = tmp_path / "split"
    assert main(["split", str(folder), "--format", "ml-100k", "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1
    assert not out.exists()


def test_out_naming_a_file_is_refused_before_reading(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "taken"
    target.write_text("keep me")
    assert main(["split", str(tmp_path / "missing"), "--format", "ml-100k", "--out", str(target)]) == 2
    assert "is a file" in capsys.readouterr().err and target.read_text() == "keep me"


@pytest.mark.realdata
def test_ml100k_u_data_round_trip(ml100k_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "split"
    assert main(["split", str(ml100k_dir), "--format", "ml-100k", "--method", "per-user", "--out", str(out)]) == 0
    assert len(read_table(out / "train.tsv", "train")) + len(read_table(out / "test.tsv", "truth")) == 100_000
    recs = tmp_path / "recs.tsv"
    argv = ["recommend", "--train", str(out / "train.tsv"), "--test", str(out / "test.tsv"), "--algorithm"]
    assert main([*argv, "item-knn", "--k", "10", "--out", str(recs)]) == 0
    capsys.readouterr()
    argv = ["evaluate", "--truth", str(out / "test.tsv"), "--recs", str(recs), "--metrics", "precision@10"]
    assert main([*argv, "--threshold", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["precision@10"] > 0.1  # popularity-level lists or better
