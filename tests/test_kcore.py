"""k-core to a fixed point (receval.data.prepare.k_core, prepare(core=K), receval data prepare, split --core)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.cli import main
from receval.data.interactions import Interactions
from receval.data.prepare import k_core, prepare
from receval.errors import DataError


def _plain_loop(frame: pd.DataFrame, core: int) -> pd.DataFrame:
    """Microsoft Recommenders' ``filter_k_core`` as written there: items then users, each by
    ``min_rating_filter_pandas`` (``groupby(col).filter(len(x) >= k)``), until no count is below k.
    Read from recommenders-team/recommenders, recommenders/datasets/split_utils.py
    (``min_rating_filter_pandas`` at commit 238ff1531f214a4ca0e110d61d5b469cbeae3999)."""
    df = frame.copy()
    while True:
        df = df.groupby("item").filter(lambda x: len(x) >= core)
        df = df.groupby("user").filter(lambda x: len(x) >= core)
        count_u, count_i = df.groupby("user")["item"].count(), df.groupby("item")["user"].count()
        if not (count_i < core).any() and not (count_u < core).any():
            return df


def _pairs(data: Interactions) -> list[tuple]:
    return sorted(zip(data.user_ids[data.users].tolist(), data.item_ids[data.items].tolist(), strict=True))


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), min_size=1, max_size=120),
    core=st.integers(1, 5),
)
def test_fixed_point_and_the_plain_loop(rows: list[tuple[int, int]], core: int) -> None:
    users, items = zip(*rows, strict=True)
    data = Interactions.from_arrays(users, items, np.ones(len(rows)))
    want = _plain_loop(pd.DataFrame({"user": users, "item": items}), core)
    if want.empty:
        with pytest.raises(DataError, match=f"core={core} removes every rating"):
            k_core(data, core)
        return
    kept, report = k_core(data, core)
    assert np.bincount(kept.users).min() >= core and np.bincount(kept.items).min() >= core  # a fixed point
    assert _pairs(kept) == sorted(zip(want["user"].tolist(), want["item"].tolist(), strict=True))
    assert report.rounds[0]["ratings"] == len(rows) and report.rounds[-1]["ratings"] == kept.n_ratings
    assert all(a["ratings"] > b["ratings"] for a, b in zip(report.rounds, report.rounds[1:], strict=False))
    assert k_core(kept, core)[1].rounds == [report.rounds[-1]]  # nothing left to remove
    assert _pairs(prepare(data, core=core)) == _pairs(kept)


def test_by_hand() -> None:
    # 2-core: c rated only x; removing c leaves x with a and b (2): a fixed point after one round
    # 3-core: every count is below 3 after c goes: nothing remains
    d = Interactions.from_arrays(list("aabbc"), list("xyxyx"), [1] * 5)
    kept, report = k_core(d, 2)
    assert _pairs(kept) == [("a", "x"), ("a", "y"), ("b", "x"), ("b", "y")]
    assert report.as_dict()["rounds"] == [
        {"users": 3, "items": 2, "ratings": 5},
        {"users": 2, "items": 2, "ratings": 4},
    ]
    with pytest.raises(DataError, match=r"core=3 removes every rating .*use a smaller core"):
        k_core(d, 3)


def test_ml_latest_small_equals_recommenders_loop(ml_latest_small_dir: Path) -> None:
    from receval.data import load

    data = load(ml_latest_small_dir, "ml-latest-small")
    frame = pd.DataFrame({"user": data.users, "item": data.items})
    for core in (5, 20, 50):
        kept, report = k_core(data, core)
        want = _plain_loop(frame, core)
        assert kept.n_ratings == len(want) and len(report.rounds) >= 2
        got = sorted(zip(kept.user_ids[kept.users].tolist(), kept.item_ids[kept.items].tolist(), strict=True))
        assert got == sorted(
            zip(data.user_ids[want["user"]].tolist(), data.item_ids[want["item"]].tolist(), strict=True)
        )


def test_cli_prepare_and_split_core(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        f"{u}\t{i}\t{1 + (u * i) % 5}\t{880000000 + u * 100 + i}"
        for u in range(1, 11)
        for i in range(1, 11)
        if (u + i) % 3
    ]
    rows += ["11\t1\t3\t880009999", "12\t50\t4\t880009998"]  # a user with one rating, an item with one rating
    (tmp_path / "u.data").write_text("\n".join(rows) + "\n")
    out = tmp_path / "core"
    assert (
        main(["data", "prepare", str(tmp_path), "--format", "ml-100k", "--core", "3", "--out", str(out), "--json"]) == 0
    )
    body = json.loads(capsys.readouterr().out)
    assert body["rounds"][0]["ratings"] == len(rows) and body["rounds"][-1]["ratings"] == len(rows) - 2
    written = pd.read_csv(out / "ratings.tsv", sep="\t")
    assert len(written) == len(rows) - 2 and written.groupby("user").size().min() >= 3
    assert main(["split", str(tmp_path), "--format", "ml-100k", "--core", "3", "--out", str(tmp_path / "s")]) == 0
    parts = [pd.read_csv(tmp_path / "s" / f"{p}.tsv", sep="\t") for p in ("train", "test")]
    assert sum(map(len, parts)) == len(rows) - 2 and 11 not in set(pd.concat(parts)["user"])
    assert main(["data", "prepare", str(tmp_path), "--format", "ml-100k", "--core", "50", "--out", str(out)]) == 2
    assert "core=50 removes every rating" in capsys.readouterr().err
