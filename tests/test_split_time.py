"""Time protocols of receval.split: cuts at a date, rolling windows, targets and candidates."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.cli import main
from receval.data.interactions import Interactions
from receval.errors import ConfigError, DataError
from receval.split import existing_candidates, rolling, select_targets, split_by_name, temporal
from receval.validate import parse_duration, parse_instant


def _toy() -> Interactions:
    # user a: items 1..4 at t = 10, 20, 30, 40; user b: items 1, 5 at t = 15, 35
    return Interactions.from_arrays(
        ["a", "a", "a", "a", "b", "b"], [1, 2, 3, 4, 1, 5], [5, 4, 3, 2, 1, 5], timestamps=[10, 20, 30, 40, 15, 35]
    )


def test_cut_at_epoch_and_iso_date() -> None:
    train, test = temporal(_toy(), at=30)
    assert sorted(test.timestamps.tolist()) == [30, 35, 40] and sorted(train.timestamps.tolist()) == [10, 15, 20]
    day = 86400 * 365
    data = Interactions.from_arrays([0, 0, 1], [0, 1, 0], [1, 1, 1], timestamps=[0, day, 2 * day])
    assert temporal(data, at="1971-01-01")[1].timestamps.tolist() == [day, 2 * day]
    assert temporal(data, at="1971-01-01T00:00:01")[1].timestamps.tolist() == [2 * day]


def test_cut_equals_the_fraction_cut_at_the_same_instant() -> None:
    from receval.data.synthetic import generate

    data = generate(40, 30, 400, seed=1)
    _, by_fraction = temporal(data, 0.25, seed=0)
    cut = int(by_fraction.timestamps.min())
    if np.sum(data.timestamps == cut) == 1:  # a tie at the cut would be ordered at random by the fraction cut
        assert len(temporal(data, at=cut)[1]) == len(by_fraction)


@pytest.mark.parametrize("at, empty", [(5, "training"), (41, "test"), ("2030-01-01", "test")])
def test_cut_outside_the_range_names_option_value_and_range(at: object, empty: str) -> None:
    with pytest.raises(
        DataError, match=rf"at={at} leaves an empty {empty} part; the data's time range is .*\(10 to 40\)"
    ):
        temporal(_toy(), at=at)  # type: ignore[arg-type]


def test_time_methods_need_timestamps() -> None:
    data = Interactions.from_arrays([0, 0, 1], [0, 1, 0], [1, 1, 1])
    for call in (
        lambda: temporal(data, at=3),
        lambda: rolling(data, 2),
        lambda: split_by_name(data, "holdout", targets="last"),
    ):
        with pytest.raises(DataError, match="has no timestamps"):
            call()


def test_durations_parse_in_one_place() -> None:
    assert parse_duration("30d", "w") == 30 * 86400 and parse_duration("1w", "w") == 7 * 86400
    assert parse_duration(" 12H ", "w") == 12 * 3600 and parse_duration("90", "w") == 90
    for bad in ("30x", "d", "-1d", "", float("nan")):
        with pytest.raises(ConfigError, match="not a duration"):
            parse_duration(bad, "window")
    assert parse_instant("1970-01-02") == 86400
    with pytest.raises(ConfigError, match="not a date"):
        parse_instant("tomorrow")


@settings(max_examples=60, deadline=None)
@given(
    times=st.lists(st.integers(0, 10_000), min_size=8, max_size=80),
    windows=st.integers(1, 4),
    fraction=st.floats(0.05, 0.2),
    gap=st.integers(0, 300),
    expanding=st.booleans(),
)
def test_rolling_windows_partition_time(
    times: list[int], windows: int, fraction: float, gap: int, expanding: bool
) -> None:
    n = len(times)
    data = Interactions.from_arrays(np.arange(n) % 5, np.arange(n), np.ones(n), timestamps=times)
    t0, t1 = min(times), max(times) + 1
    length = fraction * (t1 - t0)
    try:
        folds = rolling(data, windows, window=fraction, expanding=expanding, gap=gap)
    except DataError as err:  # only when a window or its past is empty
        assert "use fewer" in err.message
        return
    assert len(folds) == windows
    first_train = t1 - windows * length - gap - t0
    for j, (train, test) in enumerate(folds):
        start = t1 - (windows - j) * length
        assert np.all(test.timestamps >= start) and np.all(test.timestamps < start + length)  # no test event outside
        assert np.all(train.timestamps < start - gap)  # no training event after the window's start minus the gap
        if not expanding:
            assert np.all(train.timestamps >= start - gap - first_train)
        # every pair of the window's span is in its test part: the windows tile the end of time
        assert len(test) == int(np.sum((np.array(times) >= start) & (np.array(times) < start + length)))
    if expanding:  # each window's past holds the previous one's
        sizes = [len(tr) for tr, _ in folds]
        assert sizes == sorted(sizes)


def test_rolling_by_hand_with_a_gap_and_durations() -> None:
    day = 86400
    data = Interactions.from_arrays(
        [0] * 6, list(range(6)), [1] * 6, timestamps=[0, day, 2 * day, 3 * day, 4 * day, 5 * day]
    )
    folds = rolling(data, windows=2, window="1d", gap="1d")  # t1 = 5d + 1 s
    assert [te.timestamps.tolist() for _, te in folds] == [[4 * day], [5 * day]]
    # window 0 is [3d + 1 s, 4d + 1 s), window 1 [4d + 1 s, 5d + 1 s); with a one-day gap their training
    # parts end before 2d + 1 s and 3d + 1 s
    assert [tr.timestamps.tolist() for tr, _ in folds] == [[0, day, 2 * day], [0, day, 2 * day, 3 * day]]


def test_windows_that_do_not_fit() -> None:
    with pytest.raises(DataError, match=r"windows=5, window=10, gap=0: the first window leaves no training data"):
        rolling(_toy(), 5, window=10)
    with pytest.raises(DataError, match=r"window 1 .* has no test pairs"):
        rolling(_toy(), 2, window=2)


def test_targets_by_hand() -> None:
    _, test = temporal(_toy(), at=20)  # test: a at 20, 30, 40; b at 35
    ids = lambda part: sorted(zip(part.user_ids[part.users].tolist(), part.item_ids[part.items].tolist(), strict=True))  # noqa: E731
    assert ids(select_targets(_toy(), test, "first")) == [("a", 2), ("b", 5)]
    assert ids(select_targets(_toy(), test, "last")) == [("a", 4), ("b", 5)]
    points = select_targets(_toy(), test, "successive")
    # one point per (user, timestamp), user by user in time order: (a,20) (a,30) (a,40) (b,35)
    assert points.user_ids[points.users].tolist() == ["a", "a", "a", "b"]
    assert points.timestamps.tolist() == [20, 30, 40, 35]
    assert points.extra["point"].tolist() == [0, 1, 2, 3]
    assert select_targets(_toy(), test, "all") is test
    with pytest.raises(ConfigError, match="targets=next: use one of all, first, last, successive"):
        select_targets(_toy(), test, "next")


def test_successive_points_share_a_timestamp() -> None:
    data = Interactions.from_arrays([0, 0, 0, 1], [0, 1, 2, 0], [1] * 4, timestamps=[5, 5, 7, 1])
    points = select_targets(data, data, "successive")
    assert points.extra["point"].tolist() == [0, 0, 1, 2]  # (0,5) twice, (0,7), (1,1)


def test_candidates_existing_removes_items_born_after_the_cut() -> None:
    data = Interactions.from_arrays(
        ["a", "a", "a", "b", "b"], [1, 2, 3, 1, 2], [1] * 5, timestamps=[10, 20, 30, 15, 36]
    )
    train, test = temporal(data, at=30)  # test: (a, 3) at 30, (b, 2) at 36; item 3 has no training rating
    kept, rows, items = existing_candidates(train, test)
    assert kept.item_ids[kept.items].tolist() == [2] and (rows, items) == (1, 1)
    ((_, via_name),) = split_by_name(data, "temporal", at=30, candidates="existing")
    assert via_name.item_ids[via_name.items].tolist() == [2]


def test_split_by_name_rolling_and_config(tmp_path: Path) -> None:
    from receval.data.synthetic import generate
    from receval.experiment.config import parse_config
    from receval.experiment.grid import expand

    data = generate(30, 40, 400, seed=3)
    folds = split_by_name(data, "rolling", windows=3, window=0.1, expanding=False)
    assert len(folds) == 3 and folds == folds  # a list of folds, like kfold
    text = """
metrics = ["ndcg@10"]
[datasets.toy]
generate = { n_users = 30, n_items = 40 }
[split]
method = "rolling"
windows = 3
window = 0.2
targets = "last"
[protocol]
name = "one-shot"
[recommenders.pop]
algorithm = "popularity"
"""
    cfg = parse_config(text)
    assert sorted({t.fold for t in expand(cfg)}) == [0, 1, 2]
    with pytest.raises(ConfigError, match="window"):
        parse_config(text.replace("0.2", '"2x"'))
    with pytest.raises(ConfigError, match="targets"):
        parse_config(text.replace('"last"', '"middle"'))


def test_cli_split_rolling_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        f"{u}\t{i}\t{1 + (u * i) % 5}\t{880000000 + (u * 37 + i * 11) % 500 * 3600}"
        for u in range(1, 21)
        for i in range(1, 16)
    ]
    (tmp_path / "u.data").write_text("\n".join(rows) + "\n")
    base = ["split", str(tmp_path), "--format", "ml-100k"]
    assert main([*base, "--method", "rolling", "--windows", "3", "--window", "1d", "--out", str(tmp_path / "r")]) == 0
    assert all((tmp_path / "r" / f"fold-{n}" / "test.tsv").is_file() for n in (1, 2, 3))
    capsys.readouterr()
    assert main([*base, "--method", "rolling", "--window", "30x", "--out", str(tmp_path / "x")]) == 2
    assert "--window 30x: not a duration" in capsys.readouterr().err
    assert main([*base, "--method", "temporal", "--at", "2030-01-01", "--out", str(tmp_path / "x")]) == 2
    assert "--at 2030-01-01 leaves an empty test part; the data's time range is" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    assert main([*base, "--method", "holdout", "--out", str(tmp_path / "h")]) == 0
    assert "WARNING time leakage" in capsys.readouterr().err  # a random split trains on the future
    assert main([*base, "--method", "temporal", "--targets", "successive", "--out", str(tmp_path / "s")]) == 0
    err = capsys.readouterr().err
    assert "WARNING" not in err  # a global cut does not leak
    assert (tmp_path / "s" / "test.tsv").read_text().splitlines()[0] == "user\titem\trating\ttimestamp\tpoint"
