"""A library message names the parameter that fixes it as Python writes it; each command shows its own flag.

The same fix reads ``format=`` / ``columns={'user': COL}`` / ``header=False`` / ``seed=-1``
to a Python caller and ``--format`` / ``--user COL`` / ``--no-header`` / ``--seed -1`` on
the command line (:meth:`receval.errors.ReceValError.spelled`, ``receval.cli.app.flag_spelling``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from receval.cli import main
from receval.data.loaders import load
from receval.data.tables import read_table
from receval.errors import ConfigError, DataError, ReceValError, ReceValWarning
from receval.validate import check_folds, check_seed


def _cli(capsys, *args: str) -> str:
    assert main(list(args)) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    return err


def test_undetectable_format(tmp_path: Path, capsys) -> None:
    path = tmp_path / "x.dat"
    path.write_text("a;b;c\n1;2;3\n")
    with pytest.raises(DataError, match="pass format= with one of csv") as raised:
        load(path)
    assert "--" not in str(raised.value)
    assert "pass --format with one of csv" in _cli(capsys, "data", "stats", str(path))
    truth = tmp_path / "t.csv"
    truth.write_text("user,item,rating\n1,2,3\n")  # the truth's own option is --truth-format, and evaluate says it
    assert "pass --recs-format with one of" in _cli(
        capsys, "evaluate", "--truth", str(truth), "--recs", str(path), "--metrics", "mrr"
    )


def test_missing_column_names_the_column_map_or_the_header_flag(tmp_path: Path, capsys) -> None:
    path = tmp_path / "t.csv"
    path.write_text("u,i,r\n1,2,3\n")
    with pytest.raises(DataError) as raised:
        read_table(path, "truth", ("user", "item"))
    assert "name yours with columns={'user': COL}, or header=False for positional columns" in str(raised.value)
    recs = tmp_path / "r.csv"
    recs.write_text("user,item,score\n1,2,0.5\n")
    err = _cli(capsys, "evaluate", "--truth", str(path), "--recs", str(recs), "--metrics", "mrr")
    assert "name yours with --user COL, or --no-header for positional columns" in err
    with pytest.raises(DataError, match=r"columns=\{'user': 'uid'\}: the truth file has no such column"):
        read_table(path, "truth", columns={"user": "uid"})
    err = _cli(capsys, "evaluate", "--truth", str(path), "--recs", str(recs), "--metrics", "mrr", "--user", "uid")
    assert "--user uid: the truth file has no such column" in err


def test_header_false_and_a_fixed_layout(tmp_path: Path, capsys) -> None:
    path = tmp_path / "t.csv"
    path.write_text("user,item,rating\n1,2,3\n")
    with pytest.raises(DataError, match="header=False applies only to the csv and tsv formats, not parquet"):
        load(path, "parquet", header=False)
    err = _cli(capsys, "data", "stats", str(path), "--format", "parquet", "--no-header")
    assert "--no-header applies only to the csv and tsv formats, not parquet" in err


def test_seed_and_folds(tmp_path: Path, capsys) -> None:
    with pytest.raises(ConfigError, match=r"^seed=-1: a seed is an integer"):
        check_seed(-1)
    fewer = r"^folds=9: 2 users have fewer than 9 ratings \(the fewest: 3\); use folds=3 or fewer"
    with pytest.raises(ConfigError, match=fewer):
        check_folds(9, np.array([3, 4]))
    data = tmp_path / "r.csv"
    data.write_text("user,item,rating\n1,2,3\n1,3,4\n2,2,5\n")
    assert "--seed 4294967296: a seed is an integer from 0 to 4294967295" in _cli(
        capsys, "split", str(data), "--out", str(tmp_path / "o"), "--seed", str(2**32)
    )
    assert not (tmp_path / "o").exists()


def test_a_warning_names_the_flag(tmp_path: Path, capsys) -> None:
    from receval.data.synthetic import generate
    from receval.simulate import simulate
    from receval.split import holdout

    data = generate(n_users=30, n_items=40, n_ratings=400, seed=0)
    train, test = holdout(data, test_fraction=0.5, seed=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        simulate("random", train, test, rounds=1, threshold=float(data.ratings.min()), seed=0)
    found = [w.message for w in caught if isinstance(w.message, ReceValWarning)]
    assert found and str(found[0]).endswith("e.g. threshold=4 on a 1-5 scale")
    # the command prints the same warning with its flag
    ratings = tmp_path / "r.csv"
    rows = "".join(f"{u},{i},{4 + (u + i) % 2}\n" for u in range(8) for i in range(6))  # all liked at λ=4
    ratings.write_text("user,item,rating\n" + rows)
    args = ["simulate", "--data", str(ratings), "--algorithms", "random", "--rounds", "1", "--threshold", "4"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "e.g. --threshold 4 on a 1-5 scale" in err and "threshold=4" not in err, err


def test_a_metric_needing_side_data_names_its_parameter(tmp_path: Path, capsys) -> None:
    from receval import evaluate

    truth, recs = tmp_path / "t.csv", tmp_path / "r.csv"
    truth.write_text("user,item,rating\n1,a,5\n1,b,2\n2,a,4\n")
    recs.write_text("user,item,score\n1,b,0.9\n2,a,0.5\n")
    with pytest.raises(ReceValError, match=r"needs training data: pass train=$"):
        evaluate(recs, truth, ["tail_percentage@5"])
    args = ["evaluate", "--truth", str(truth), "--recs", str(recs), "--metrics"]
    assert "needs training data: pass --train" in _cli(capsys, *args, "tail_percentage@5")
    err = _cli(capsys, *args, "fallout@5")
    assert "give --threshold (and optionally --negative-threshold), e.g. --threshold 4 on a 1-5 scale" in err


def test_messages_name_ids_as_written_never_as_numpy_reprs() -> None:
    from receval import Interactions
    from receval.data.interactions import RatingScale

    with pytest.raises(DataError) as caught:
        Interactions.from_arrays([10, 20], [7, 8], [5, 9], scale=RatingScale(1, 5))
    assert "of user 20, item 8 is outside" in str(caught.value) and "np." not in str(caught.value)
    sources = Path(__file__).resolve().parents[1] / "src" / "receval"
    bare = [
        f"{path.name}:{n}"
        for path in sources.rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "_ids[" in line and "]!r}" in line
    ]
    assert bare == [], f"an id shown with !r (np.int64(...) under NumPy 2): use errors.shown_id: {bare}"
