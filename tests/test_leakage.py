"""The leakage audit (receval.stats.leakage, receval audit): hand counts, a brute-force reference, real data."""

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
from receval.split import holdout, temporal
from receval.stats.leakage import audit


def _brute(train: list[tuple], test: list[tuple], recs: list[tuple]) -> dict[str, float]:
    """The figures by their definitions, one Python loop each (rows are (user, item, time))."""
    test_time = {}
    for u, _, t in test:
        test_time[u] = min(t, test_time.get(u, t))
    first_seen = {}
    for _, i, t in train + test:
        first_seen[i] = min(t, first_seen.get(i, t))
    later = [u in test_time and t > test_time[u] for u, _, t in train]
    affected = {u for (u, _, _), bad in zip(train, later, strict=True) if bad}
    future = [first_seen[i] > test_time[u] for u, i, _ in test]
    listed = [(u, i) for u, i in recs if u in test_time]
    in_recs = [i in first_seen and first_seen[i] > test_time[u] for u, i in listed]
    train_pairs = {(u, i) for u, i, _ in train}
    return {
        "train_after_test": sum(later) / len(later) if later else 0.0,
        "users_affected": len(affected) / len(test_time) if test_time else 0.0,
        "future_items": sum(future) / len(future) if future else 0.0,
        "future_items_in_recs": sum(in_recs) / len(in_recs) if in_recs else 0.0,
        "overlap_pairs": len(train_pairs & {(u, i) for u, i, _ in test}),
        "unseen_test_users": len(set(test_time) - {u for u, _, _ in train}),
        "unseen_test_items": len({i for _, i, _ in test} - {i for _, i, _ in train}),
    }


def test_hand_count_on_a_toy_split() -> None:
    # user a: train (x, 1), (y, 9), (z, 2); test (w, 5), (x, 7) -> test time 5; y at 9 is later (1 of 3 a's rows)
    # user b: train (x, 2); test (y, 6) -> test time 6; no later training row
    # user c: test (v, 8) only (unseen); items: w first seen 5 (a's test time 5: not later), v first seen 8 > 8? no
    train = pd.DataFrame({"user": list("aaab"), "item": list("xyzx"), "timestamp": [1, 9, 2, 2]})
    test = pd.DataFrame({"user": list("aabc"), "item": list("wxyv"), "timestamp": [5, 7, 6, 8]})
    run = pd.DataFrame({"user": list("aabbq"), "item": list("yvvzx")})
    r = audit(train, test, run)
    assert r.train_after_test == 1 / 4  # (a, y, 9) of 4 training rows
    assert r.users_affected == 1 / 3  # a of a, b, c
    # y first seen at 6 (b's test) > 5? it is a's later train row at 9 and b's test at 6: first seen 6, b's time 6: no
    assert r.future_items == 0.0
    # run: (a, y) 6 > 5 yes; (a, v) 8 > 5 yes; (b, v) 8 > 6 yes; (b, z) 2 no; q is no test user
    assert r.future_items_in_recs == 3 / 4
    assert (r.overlap_pairs, r.unseen_test_users, r.unseen_test_items) == (1, 1, 2)  # (a, x); c; w and v
    assert r.as_dict()["future_items_in_recs"] == 3 / 4 and "future_items_in_recs" not in audit(train, test).as_dict()


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 8), st.integers(0, 30), st.booleans()), min_size=2, max_size=60
    ),
    recs=st.lists(st.tuples(st.integers(0, 8), st.integers(0, 10)), max_size=20),
)
def test_equals_the_definitions(rows: list[tuple[int, int, int, bool]], recs: list[tuple[int, int]]) -> None:
    train = [(u, i, t) for u, i, t, is_test in rows if not is_test]
    test = [(u, i, t) for u, i, t, is_test in rows if is_test]
    if not train or not test:
        return
    frame = lambda part: pd.DataFrame(part, columns=["user", "item", "timestamp"])  # noqa: E731
    r = audit(frame(train), frame(test), pd.DataFrame(recs, columns=["user", "item"]))
    want = _brute(train, test, recs)
    got = {k: getattr(r, k) for k in want}
    assert got == pytest.approx(want)
    # the same split as Interactions over one id space gives the same figures
    data = Interactions.from_arrays(
        *zip(*[(u, i, 1.0) for u, i, _, _ in rows], strict=True), timestamps=[t for *_, t, _ in rows]
    )
    mask = np.array([is_test for *_, is_test in rows])
    assert audit(data.subset(~mask), data.subset(mask)).as_dict() == audit(frame(train), frame(test)).as_dict()


def test_global_cut_has_no_leakage_and_random_split_has() -> None:
    from receval.data.synthetic import generate

    data = generate(60, 50, 900, seed=4)
    r = audit(*temporal(data, 0.2))
    assert r.train_after_test == 0.0 and r.users_affected == 0.0 and not r.leaks
    assert audit(*holdout(data, 0.2, seed=0)).train_after_test > 0


def test_ml100k_random_split_leaks(ml100k_dir: Path) -> None:
    from receval.data import load

    data = load(ml100k_dir, "ml-100k")
    r = audit(*holdout(data, 0.2, seed=0))
    assert r.train_after_test > 0.5 and r.users_affected > 0.9 and r.leaks  # most of a random split is "future"
    cut = audit(*temporal(data, at="1998-03-01"))
    assert cut.train_after_test == 0.0 and cut.users_affected == 0.0


def test_without_timestamps_the_time_figures_are_none() -> None:
    r = audit(pd.DataFrame({"user": [1], "item": [1]}), pd.DataFrame({"user": [1, 2], "item": [1, 3]}))
    assert r.train_after_test is None and r.future_items is None and not r.timestamps
    assert (r.overlap_pairs, r.unseen_test_users, r.unseen_test_items) == (1, 1, 1)


def test_cli_audit(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "train.tsv").write_text(
        "user\titem\trating\ttimestamp\na\tx\t1\t1\na\ty\t1\t9\nb\tx\t1\t2\na\tz\t1\t2\n"
    )
    (tmp_path / "test.tsv").write_text(
        "user\titem\trating\ttimestamp\na\tw\t1\t5\na\tx\t1\t7\nb\ty\t1\t6\nc\tv\t1\t8\n"
    )
    (tmp_path / "run.tsv").write_text("user\titem\tscore\na\ty\t3\na\tv\t2\nb\tv\t1\nb\tz\t1\nq\tx\t1\n")
    args = ["audit", "--train", str(tmp_path / "train.tsv"), "--test", str(tmp_path / "test.tsv")]
    assert main([*args, "--recs", str(tmp_path / "run.tsv"), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["train_after_test"] == 0.25 and body["users_affected"] == pytest.approx(1 / 3)
    assert body["future_items"] == 0.0 and body["overlap_pairs"] == 1 and body["future_items_in_recs"] == 0.75
    assert main([*args, "--json"]) == 0 and "future_items_in_recs" not in json.loads(capsys.readouterr().out)
    assert main(["audit", "--train", str(tmp_path / "missing.tsv"), "--test", str(tmp_path / "test.tsv")]) == 2
