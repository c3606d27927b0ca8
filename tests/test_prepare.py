"""One data-preparation path: the command line and an experiment configuration see the same data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from receval import Interactions
from receval.cli import main
from receval.data import load
from receval.data.prepare import prepare
from receval.errors import DataError
from receval.experiment.datasets import apply_filters


def write_cm100k(folder: Path, seed: int = 4) -> Path:
    """A CM100k release folder (ratings.txt: user, track, rating 1-4, known; no header).

    Items 900..904 are rated only by users who do not know them, so familiar-only
    data has fewer items than the whole file: the id space policy shows.
    """
    rng = np.random.default_rng(seed)
    u, i = np.nonzero(rng.random((40, 30)) < 0.45)
    known = (rng.random(len(u)) < 0.6).astype(int)
    rows = list(zip(1000 + u, 500 + i, rng.integers(1, 5, len(u)), known, strict=True))
    rows += [(1000 + j, 900 + j, 2, 0) for j in range(5)]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ratings.txt").write_text("".join("\t".join(map(str, r)) + "\n" for r in rows))
    return folder


def test_loader_runner_and_prepare_agree_and_reindex(tmp_path):
    folder = write_cm100k(tmp_path / "cm")
    whole = load(folder, "cm100k")
    by_loader = load(folder, "cm100k", familiar_only=True)
    by_runner = apply_filters(whole, {"familiar_only": True})
    flags = whole.extra["familiar"]
    assert by_loader.n_ratings == by_runner.n_ratings == int(flags.sum())
    for attr in ("users", "items", "ratings", "user_ids", "item_ids"):
        assert np.array_equal(getattr(by_loader, attr), getattr(by_runner, attr)), attr
    # the id space is the familiar rows' own: as a file holding only those rows
    kept = whole.to_frame()[flags]
    assert by_runner.item_ids.tolist() == sorted(kept["item"].unique().tolist())
    assert by_runner.user_ids.tolist() == sorted(kept["user"].unique().tolist())
    assert not set(range(900, 905)) & set(by_runner.item_ids.tolist())
    assert by_runner.n_items < whole.n_items


def test_min_ratings_one_pass_each_in_order():
    # user 0: 3 ratings, user 1: 2, user 2: 1; item 0 rated by users 0,1,2, item 1 by 0,1, item 2 by 0
    d = Interactions.from_arrays([0, 0, 0, 1, 1, 2], [0, 1, 2, 0, 1, 0], [1, 2, 3, 4, 5, 1])
    p = prepare(d, min_user_ratings=2, min_item_ratings=2)
    # users 0 and 1 stay; then item counts over their 5 rows: item 0 (2), item 1 (2), item 2 (1)
    assert p.to_frame()[["user", "item"]].values.tolist() == [[0, 0], [0, 1], [1, 0], [1, 1]]
    assert (p.n_users, p.n_items) == (2, 2)
    assert prepare(d) is d


def test_prepare_refuses_what_it_cannot_do():
    d = Interactions.from_arrays([0, 1], [0, 1], [1, 2])
    with pytest.raises(DataError, match=r"familiar_only needs a 'familiar' flag.*data set 'toy'"):
        prepare(d, familiar_only=True, label="toy")
    with pytest.raises(DataError, match=r"the filters \(min_user_ratings=5\) leave no ratings"):
        prepare(d, min_user_ratings=5)
    with pytest.raises(DataError, match="whole number"):
        prepare(d, min_item_ratings=-1)


CONFIG = """\
name = "familiar"
seeds = [3]

[datasets.cm]
path = "{path}"
format = "cm100k"
filters = {{ familiar_only = true }}
threshold = 3

[split]
method = "holdout"
test_fraction = 0.25

[protocol]
name = "cyclic"
rounds = 15

[recommenders.random]
[recommenders.popularity]
[recommenders.item-bandit-ts]
"""


def test_simulate_familiar_only_equals_the_toml_run(tmp_path, capsys):
    folder = write_cm100k(tmp_path / "cm")
    algorithms = ["random", "popularity", "item-bandit-ts"]
    args = ["simulate", "--data", str(folder), "--format", "cm100k", "--familiar-only", "--threshold", "3",
            "--test-fraction", "0.25", "--rounds", "15", "--seed", "3", "--algorithms", ",".join(algorithms),
            "--json"]  # fmt: skip
    assert main(args) == 0
    cli = pd.DataFrame(json.loads(capsys.readouterr().out)["final"]).T

    config = tmp_path / "familiar.toml"
    config.write_text(CONFIG.format(path=folder.as_posix()))
    assert main(["run", str(config), "--out", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    aggregates = pd.read_parquet(tmp_path / "out" / "aggregates.parquet")
    tasks = pd.read_parquet(tmp_path / "out" / "tasks.parquet")
    label = next(c for c in ("recommender", "algorithm") if c in tasks.columns)
    merged = aggregates.merge(tasks[["task_id", label]], on="task_id")
    toml = merged.pivot(index=label, columns="metric", values="value").loc[algorithms, cli.columns]
    assert not toml.isna().all().all()
    pd.testing.assert_frame_equal(
        toml.astype(float), cli.loc[algorithms].astype(float), check_names=False, check_exact=True
    )
