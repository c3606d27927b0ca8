"""Eq. 8 of Said & Bellogín (UMUAI 2018, §3.3): coherence over the times of a user's repeated ratings.

``gamma_{u,t} = sum_i -(mu_hat_ui - r^t_ui)^2`` over the items the user rated at time t,
``C_u = -sum_t gamma_{u,t}``. The tests compute it by hand, literally from the formula
(grouping by timestamp), and from its link to Algorithm 1's per-user barrier.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.cli import main
from receval.data.interactions import Interactions
from receval.errors import DataError
from receval.stats.barrier import magic_barrier
from receval.stats.coherence import ALL_GAMMAS, EQ8, GAMMAS, coherence, coherence_all

# user a: item x at times 10, 20, 30 (1, 2, 6: mean 3), item y once, item z twice (4, 5: mean 4.5)
# user b: item x twice alike; user c: two items once each (no repeated pair)
ROWS = [
    ("a", "x", 1, 10), ("a", "x", 2, 20), ("a", "x", 6, 30), ("a", "y", 4, 10), ("a", "z", 4, 20), ("a", "z", 5, 40),
    ("b", "x", 5, 10), ("b", "x", 5, 50),
    ("c", "x", 3, 10), ("c", "y", 2, 20),
]  # fmt: skip


def _data(rows=ROWS) -> Interactions:
    users, items, ratings, times = zip(*rows, strict=True)
    return Interactions.from_arrays(list(users), list(items), list(ratings), timestamps=list(times))


def test_hand_computed_example():
    c = coherence(_data(), EQ8)
    by_user = dict(zip(c.user_ids.tolist(), c.values.tolist(), strict=True))
    # a: (1-3)^2 + (2-3)^2 + (6-3)^2 = 14 for x, 0 for y, 0.25 + 0.25 for z
    assert by_user["a"] == pytest.approx(14.5)
    assert by_user["b"] == 0.0
    assert np.isnan(by_user["c"])  # no repeated pair: no estimate, as in the per-user barrier
    assert c.defined.tolist() == [True, True, False]
    assert c.n_multi.tolist() == [2, 1, 0]  # pairs rated at least twice
    assert c.n_attributed.tolist() == [6, 2, 2]  # every rating has its time
    assert c.summary()["n_users"] == 2 and c.summary()["n_undefined"] == 1


def _literal_eq8(frame: pd.DataFrame) -> dict[str, float]:
    """Eq. 8 as written: attributes are the rating times; gamma per (user, time); C = -sum of gamma."""
    out = {}
    for user, mine in frame.groupby("user"):
        mu = mine.groupby("item")["rating"].mean()
        if not (mine.groupby("item").size() > 1).any():
            continue
        gammas = []
        for _, at_t in mine.groupby("timestamp"):
            gammas.append(sum(-((mu[i] - r) ** 2) for i, r in zip(at_t["item"], at_t["rating"], strict=True)))
        out[user] = -sum(gammas)
    return out


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.integers(0, 5), st.integers(1, 5), st.integers(0, 6)), min_size=2, max_size=40
    )
)
def test_equals_the_formula_grouped_by_timestamp(rows):
    frame = pd.DataFrame(rows, columns=["user", "item", "rating", "timestamp"])
    expected = _literal_eq8(frame)
    data = Interactions.from_arrays(frame["user"], frame["item"], frame["rating"], timestamps=frame["timestamp"])
    if not data.has_duplicates:
        with pytest.raises(DataError, match="rated once"):
            coherence(data, EQ8)
        return
    c = coherence(data, EQ8)
    got = {u: v for u, v, d in zip(c.user_ids.tolist(), c.values.tolist(), c.defined.tolist(), strict=True) if d}
    assert got.keys() == expected.keys()
    for user, value in expected.items():
        assert got[user] == pytest.approx(value, abs=1e-9)


def test_is_m_pairs_times_the_squared_per_user_barrier():
    """With every pair rated m times, C_u = m |X_u| B_u^2 (Algorithm 1, ddof=0): Eq. 8's link to the barrier."""
    rng = np.random.default_rng(3)
    m, users, items = 3, 12, 9
    rows = []
    for u in range(users):
        for i in rng.choice(items, size=rng.integers(1, items), replace=False):
            rows += [(u, int(i), int(r), t) for t, r in enumerate(rng.integers(1, 6, size=m))]
    data = _data(rows)
    c = coherence(data, EQ8)
    b = magic_barrier(data, n_bootstrap=0).users
    pairs = b["n_pairs"].to_numpy()
    np.testing.assert_allclose(c.values[b["index"].to_numpy()], m * pairs * b["barrier"].to_numpy() ** 2, rtol=1e-12)


def test_reads_the_repeats_not_a_deduplicated_copy():
    data = _data()
    assert coherence(data, EQ8).values[0] == pytest.approx(14.5)
    with pytest.raises(DataError) as err:
        coherence(data.deduplicate("last"), EQ8)
    message = str(err.value)
    assert "\n" not in message and "rated once" in message and "reratings=" in message and "wstd" in message


def test_needs_no_item_attributes_and_no_timestamps():
    data = _data()
    assert data.aspects is None
    frame = data.to_frame()
    untimed = Interactions.from_arrays(frame["user"], frame["item"], frame["rating"])
    np.testing.assert_array_equal(coherence(untimed, EQ8).values, coherence(data, EQ8).values)
    with pytest.raises(DataError, match="item attributes"):
        coherence(data, "wstd")


def test_coherence_all_mixes_attribute_and_time_functions():
    data = _data().with_aspects(pd.DataFrame({"item": ["x", "y", "z"], "aspect": ["g", "g", "h"]}))
    both = coherence_all(data, ["std", EQ8], keep="first")
    assert list(both) == ["std", EQ8]
    np.testing.assert_array_equal(both[EQ8].values, coherence(data, EQ8).values)
    np.testing.assert_array_equal(both["std"].values, coherence(data, "std", keep="first").values)
    assert ALL_GAMMAS == (*GAMMAS, EQ8)
    with pytest.raises(DataError, match="barrier"):
        coherence(data, "noise")


def test_command_line(tmp_path, capsys):
    path = tmp_path / "r.csv"
    _data().to_frame().to_csv(path, index=False)
    assert main(["coherence", "--data", str(path), "--format", "csv", "--gamma", "barrier", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["users"] == {"a": pytest.approx(14.5), "b": 0.0} and out["undefined_users"] == ["c"]
    assert main(["coherence", "--data", str(path), "--format", "csv", "--gamma", "barrier"]) == 0
    text = capsys.readouterr().out
    assert "Eq. 8" in text and "1 without a repeated rating" in text
    assert text.index("  a\t14.5000") < text.index("most coherent")  # the noisiest user is listed as difficult
    once = tmp_path / "once.csv"
    _data().deduplicate("last").to_frame().to_csv(once, index=False)
    assert main(["coherence", "--data", str(once), "--format", "csv", "--gamma", "barrier"]) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "--gamma" in captured.err and "Traceback" not in captured.err
