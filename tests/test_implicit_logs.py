"""A log of users and items (and times) without ratings reads as implicit feedback: each row rated 1."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from receval.cli import main
from receval.data import load
from receval.data.interactions import Interactions
from receval.errors import DataError


def _log(folder: Path, name: str, **columns: list[object]) -> Path:
    frame = pd.DataFrame(columns)
    path = folder / name
    if path.suffix == ".parquet":
        frame.to_parquet(path)
    else:
        frame.to_csv(path, index=False, sep="\t" if path.suffix == ".tsv" else ",")
    return path


USERS, ITEMS = ["u1", "u1", "u2", "u3", "u3", "u3"], ["a", "b", "a", "c", "a", "d"]


@pytest.mark.parametrize("name", ["log.csv", "log.tsv", "log.parquet"])
def test_a_log_without_ratings_is_read_as_every_row_rated_one(tmp_path: Path, name: str) -> None:
    data = load(_log(tmp_path, name, user=USERS, item=ITEMS))
    same = Interactions.from_frame(pd.DataFrame({"user": USERS, "item": ITEMS}), rating=None)
    assert data.ratings.tolist() == [1.0] * 6 and (data.scale.low, data.scale.high) == (1.0, 1.0)
    assert data.user_ids.tolist() == same.user_ids.tolist() and data.item_ids.tolist() == same.item_ids.tolist()
    assert np.array_equal(data.users, same.users) and np.array_equal(data.items, same.items)
    assert data.timestamps is None


def test_the_times_of_a_log_are_kept(tmp_path: Path) -> None:
    data = load(_log(tmp_path, "log.csv", user=USERS, item=ITEMS, timestamp=[5, 6, 7, 8, 9, 10]))
    assert data.ratings.tolist() == [1.0] * 6 and data.timestamps.tolist() == [5, 6, 7, 8, 9, 10]


@pytest.mark.parametrize(
    ("columns", "named"),
    [
        ({"score": [4, 5, 3, 2, 1, 5]}, {}),  # a column that may hold the ratings under another name
        ({"timestamp": [1, 2, 3, 4, 5, 6]}, {"rating": "stars"}),  # a rating column named and absent
    ],
)
def test_a_file_that_may_hold_ratings_elsewhere_still_needs_them_named(
    tmp_path: Path, columns: dict[str, list[object]], named: dict[str, str]
) -> None:
    path = _log(tmp_path, "r.csv", user=USERS, item=ITEMS, **columns)
    with pytest.raises(DataError, match="rating") as err:
        load(path, **named)
    assert err.value.path is not None and str(path) in str(err.value)


def test_recommend_on_a_log_equals_recommend_on_the_same_rows_rated_one(tmp_path: Path, capsys) -> None:
    rng = np.random.default_rng(4)
    pairs = sorted({(f"u{rng.integers(30)}", f"i{rng.integers(25)}") for _ in range(300)})
    users, items = [u for u, _ in pairs], [i for _, i in pairs]
    log = _log(tmp_path, "log.csv", user=users, item=items)
    rated = _log(tmp_path, "rated.csv", user=users, item=items, rating=[1] * len(pairs))
    for algorithm in ("popularity", "ease", "item-knn"):
        outs = []
        for source in (log, rated):
            out = tmp_path / f"{algorithm}-{source.stem}.csv"
            argv = ["recommend", "--train", str(source), "--algorithm", algorithm, "--k", "5", "--out", str(out)]
            extra = ["--param", "threshold=1"] if algorithm in ("popularity", "ease") else ["--param", "k=10"]
            assert main([*argv, *extra]) == 0, capsys.readouterr().err
            outs.append(out.read_bytes())
        assert outs[0] == outs[1], algorithm
    assert main(["split", str(log), "--method", "per-user", "--out", str(tmp_path / "split")]) == 0
    assert (tmp_path / "split" / "train.tsv").is_file()


def test_a_log_keeps_the_extra_columns_asked_for(tmp_path: Path) -> None:
    path = _log(tmp_path, "log.csv", user=USERS, item=ITEMS, session=[1, 1, 2, 3, 3, 3])
    data = load(path, extra=["session"])  # asked for: not a column that may hold ratings
    assert data.ratings.tolist() == [1.0] * 6 and data.extra["session"].tolist() == [1, 1, 2, 3, 3, 3]
    with pytest.raises(DataError, match="rating"):  # not asked for: it may be the ratings
        load(path)
