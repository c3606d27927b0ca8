"""Ids are read exactly as written, on every path that reads ratings: load() and the commands.

``007``, ``7``, ``07`` and ``0007`` are four items; ``1``, ``1.0`` and ``1e0`` three; `` 7``
is not ``7``. Each id written back (``split``, ``recommend``, ``predict``) is the same text.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receval.cli import main
from receval.data import load

# spellings that a numeric parser would merge, and text no parser should touch (no tab, no newline, no quote)
SPELLINGS = ["007", "7", "07", "0007", "1", "1.0", "1e0", " 7", "7 ", "+7", "-0", "0", "x", "é", "日本", "a b", "nan"]
_settings = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
rows_strategy = st.lists(
    st.tuples(st.sampled_from(SPELLINGS), st.sampled_from(SPELLINGS), st.integers(1, 5)), min_size=2, max_size=25
)


def _write(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    path.write_text("user\titem\trating\n" + "".join(f"{u}\t{i}\t{r}\n" for u, i, r in rows), encoding="utf-8")
    return path


def _ids(path: Path) -> list[tuple[str, str]]:
    """The (user, item) fields of a TSV file with a header, as the bytes hold them."""
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    return [tuple(line.split("\t")[:2]) for line in lines]  # type: ignore[misc]


def _run(capsys: pytest.CaptureFixture[str], *args: object) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_issues_example_keeps_four_items_and_writes_them_back(tmp_path, capsys):
    rows = [("u", "007", 4), ("u", "7", 3), ("u", "07", 5), ("u", "0007", 2), ("v", "7", 1), ("v", "1.0", 4),
            ("v", "1", 2), ("v", "1e0", 3), ("w", "007", 5), ("w", "x", 2)]  # fmt: skip
    path = _write(tmp_path / "r.tsv", rows)
    data = load(path)
    assert sorted(data.item_ids.tolist()) == ["0007", "007", "07", "1", "1.0", "1e0", "7", "x"]
    assert data.n_duplicates == 0
    code, out, err = _run(capsys, "split", path, "--method", "holdout", "--seed", "1", "--out", tmp_path / "s")
    assert code == 0, err
    written = _ids(tmp_path / "s" / "train.tsv") + _ids(tmp_path / "s" / "test.tsv")
    assert sorted(written) == sorted((u, i) for u, i, _ in rows)
    code, out, err = _run(capsys, "predict", "--train", path, "--test", path, "--algorithm", "global-mean",
                          "--out", tmp_path / "p.tsv")  # fmt: skip
    assert code == 0, err
    assert _ids(tmp_path / "p.tsv") == [(u, i) for u, i, _ in rows]
    code, out, err = _run(capsys, "barrier", "--data", path, "--format", "tsv", "--bootstrap", "0", "--json")
    assert code == 2 and "rated once" in err + out  # no pair is rated twice: there is no barrier to estimate


@_settings
@given(rows=rows_strategy)
def test_load_keeps_every_spelling(tmp_path, rows):
    data = load(_write(tmp_path / "r.tsv", rows))
    assert [str(data.user_ids[u]) for u in data.users] == [u for u, _, _ in rows]
    assert [str(data.item_ids[i]) for i in data.items] == [i for _, i, _ in rows]
    assert data.n_users == len({u for u, _, _ in rows}) and data.n_items == len({i for _, i, _ in rows})
    as_text = load(tmp_path / "r.tsv", ids_as_str=True)
    assert sorted(map(str, as_text.user_ids)) == sorted(map(str, data.user_ids))


@_settings
@given(rows=rows_strategy)
def test_commands_keep_every_spelling(tmp_path_factory, capsys, rows):
    tmp = tmp_path_factory.mktemp("ids")
    scale = ("--scale", "1..5")  # declared: two rows of one rating would infer a scale of one value
    path = _write(tmp / "r.tsv", rows)
    users, items = {u for u, _, _ in rows}, {i for _, i, _ in rows}

    code, out, err = _run(capsys, "data", "stats", path, "--json", *scale)
    assert code == 0, err
    stats = json.loads(out)
    assert (stats["n_users"], stats["n_items"], stats["n_ratings"]) == (len(users), len(items), len(rows))

    code, _, err = _run(capsys, "split", path, "--method", "holdout", "--seed", "0", "--out", tmp / "split", *scale)
    assert code == 0, err
    written = _ids(tmp / "split" / "train.tsv") + _ids(tmp / "split" / "test.tsv")
    assert sorted(written) == sorted((u, i) for u, i, _ in rows)

    code, _, err = _run(capsys, "recommend", "--train", path, "--algorithm", "popularity", "--k", "1",
                        "--include-train", "--out", tmp / "recs.tsv", *scale)  # fmt: skip
    assert code == 0, err
    listed = _ids(tmp / "recs.tsv")
    assert {u for u, _ in listed} == users and {i for _, i in listed} <= items
    assert len(listed) == len(users)  # k=1: one list of one item per user, under the user's own spelling

    code, _, err = _run(capsys, "predict", "--train", path, "--test", path, "--algorithm", "global-mean",
                        "--out", tmp / "pred.tsv", *scale)  # fmt: skip
    assert code == 0, err
    assert _ids(tmp / "pred.tsv") == [(u, i) for u, i, _ in rows]

    repeated = sum(1 for n in Counter((u, i) for u, i, _ in rows).values() if n > 1)
    code, out, err = _run(capsys, "barrier", "--data", path, "--format", "tsv", "--bootstrap", "0", "--json", *scale)
    if repeated:
        assert code == 0, err
        assert json.loads(out)["n_pairs"] == repeated
    else:
        assert code == 2 and "rated once" in err + out
