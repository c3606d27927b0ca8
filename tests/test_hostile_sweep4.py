"""A fourth sweep of hostile input: the commands and options the first three sweeps touched least.

User-group files with an empty group, a significance level past what the noncentral t
distribution can evaluate, an off-policy log with a propensity of 1e-300 or a reward off
the study's 0/1 scale, evaluation points without truth and a ``repeat`` filter that
leaves none. Each is refused with exit status 2 and one ``error: ...`` line naming the
file (line), the id or the option, or, where the input is legal, answered with finite
numbers and the ids as written.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from receval.cli import main
from test_hostile_inputs import refused

# 6 users x 5 items; users 1..3 rate items 1..3 highly, users 4..6 items 3..5
TRUTH = "user\titem\trating\n" + "".join(
    f"{u}\t{i}\t{5 if (u <= 3) == (i <= 3) else 1}\n" for u in range(1, 7) for i in range(1, 6)
)
RECS = "user\titem\tscore\n" + "".join(f"{u}\t{i}\t{1.0 / i}\n" for u in range(1, 7) for i in range(1, 6))


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ------------------------------------------------------------------ user groups


@pytest.mark.parametrize("command", ["evaluate", "compare"])
def test_a_user_with_an_empty_group_is_refused_by_its_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """An empty group cell was a group named '' ("got  (1)"); it is the user's missing group, named."""
    truth, recs = write(tmp_path, "t.tsv", TRUTH), write(tmp_path, "r.tsv", RECS)
    groups = write(tmp_path, "g.csv", "user,group\n1,a\n2,a\n3,a\n4,b\n5,b\n6,\n")
    runs = [recs] if command == "evaluate" else [f"a={recs}", f"b={recs}"]
    args = ["--recs", *runs] if command == "evaluate" else runs
    line = refused(capsys, [command, "--truth", truth, *args, "--metrics", "ndcg@3", "--user-groups", groups],
                   names="user '6'")  # fmt: skip
    assert "empty group" in line


def test_an_empty_group_in_a_frame_is_not_the_group_nan() -> None:
    """The Python API: a missing group was the text 'nan' (or 'None'), a group of its own."""
    import pandas as pd

    from receval.errors import DataError
    from receval.stats.groups import align_groups

    table = pd.DataFrame({"user": [1, 2, 3, 4, 5], "group": ["a", "a", "b", "b", None]})
    with pytest.raises(DataError, match="user 5"):
        align_groups([1, 2, 3, 4, 5], table)


# ------------------------------------------------------------------ power


@pytest.mark.parametrize("alpha", ["1e-300"])  # 1e-100 is computed now (test_leftovers: the noncentral t's integral)
def test_a_significance_level_past_the_noncentral_t_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], alpha: str
) -> None:
    """scipy's noncentral t is NaN that deep in the tail: brentq's ValueError was a traceback. At 1e-300 the t
    critical value itself is past float64 (-inf)."""
    truth, recs = write(tmp_path, "t.tsv", TRUTH), write(tmp_path, "r.tsv", RECS)
    refused(capsys, ["power", "--truth", truth, "--recs", recs, "--metric", "ndcg@3", "--effect", "0.01",
                     "--alpha", alpha], names="alpha")  # fmt: skip


# ------------------------------------------------------------------ off-policy evaluation


def test_the_effective_sample_size_of_huge_weights_is_finite() -> None:
    """Weights of 1e300 overflowed Σw² to inf and Kish's ESS (Σw)²/Σw² to NaN; it is 1 (one weight dominates)."""
    from receval.stats.ope import estimate

    est = estimate([1, 0, 1, 1], [1e-300, 0.5, 0.5, 0.5], [1, 1, 0, 1], n_bootstrap=0)
    assert math.isfinite(est["ips"].ess)
    assert est["ips"].ess == pytest.approx(1.0)
    # Kish's formula by hand where nothing overflows: weights 2, 2, 0, 2 -> 36 / 12 = 3
    assert estimate([1, 0, 1, 1], [0.5] * 4, [1, 1, 0, 1], n_bootstrap=0)["ips"].ess == pytest.approx(3.0)


def log_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """A log written by `receval ope --log-out` on 8 x 5 generated data: its lines."""
    out = tmp_path / "log.csv"
    status = main(["ope", "--synthetic", "8x5", "--rounds", "30", "--bootstrap", "0", "--targets", "random",
                   "--log-out", str(out), "--seed", "1"])  # fmt: skip
    capsys.readouterr()
    assert status == 0
    return out.read_text().splitlines()


def bad_log(tmp_path: Path, capsys: pytest.CaptureFixture[str], line: int, field: int, value: str) -> Path:
    """That log, written again as bad.csv with field ``field`` of line ``line`` (0: the header) set to ``value``."""
    lines = log_file(tmp_path, capsys)
    fields = lines[line].split(",")
    fields[field] = value
    lines[line] = ",".join(fields)
    return write(tmp_path, "bad.csv", "\n".join(lines) + "\n")


def test_a_log_reward_off_the_0_1_scale_is_named_by_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A reward of 5 was refused by the reward model as 'rating 5 of user 6, item 5': no file, no line."""
    bad = bad_log(tmp_path, capsys, 3, 3, "5")
    line = refused(capsys, ["ope", "--synthetic", "8x5", "--bootstrap", "0", "--targets", "random", "--log", bad,
                            "--seed", "1"], names="bad.csv")  # fmt: skip
    assert "line 4" in line and "reward" in line


def test_a_log_nan_is_shown_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The bad value was shown as numpy's repr, np.float64(nan)."""
    bad = bad_log(tmp_path, capsys, 2, 4, "nan")
    line = refused(capsys, ["ope", "--synthetic", "8x5", "--bootstrap", "0", "--targets", "random", "--log", bad],
                   names="line 3")  # fmt: skip
    assert "np.float64" not in line and "nan" in line


# ------------------------------------------------------------------ evaluation points

POINT_TRUTH = "user\titem\ttimestamp\n" + "".join(f"u{u}\t{u + p}\t{100 + p}\n" for u in range(1, 4) for p in range(2))
POINT_HISTORY = "user\titem\ttimestamp\n" + "".join(f"u{u}\t{u + 7}\t50\n" for u in range(1, 4))


def test_recommendation_points_without_truth_are_named_by_user_and_time(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Points of the recommendations absent from the truth were warned of as 'user(s) ... (e.g. 6)': an internal
    point code in place of the user's id."""
    rows = [(u, 100 + p) for u in range(1, 4) for p in range(2)] + [(3, 999)]
    recs = "user\titem\tscore\ttimestamp\n" + "".join(
        f"u{u}\t{i}\t{1.0 / i}\t{t}\n" for u, t in rows for i in range(1, 6)
    )
    truth, run = write(tmp_path, "t.tsv", POINT_TRUTH), write(tmp_path, "r.tsv", recs)
    status = main(["evaluate", "--truth", str(truth), "--recs", str(run), "--metrics", "recall@5", "--points"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "u3" in captured.err and "999" in captured.err, captured.err
    assert "user(s) of the recommendations" not in captured.err


def test_repeat_only_without_a_repeated_item_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--repeat only with no truth item in its user's history said 'the truth has no rows'; the truth has six."""
    recs = "user\titem\tscore\ttimestamp\n" + "".join(
        f"u{u}\t{i}\t{1.0 / i}\t{100 + p}\n" for u in range(1, 4) for p in range(2) for i in range(1, 6)
    )
    truth, run = write(tmp_path, "t.tsv", POINT_TRUTH), write(tmp_path, "r.tsv", recs)
    history = write(tmp_path, "h.tsv", POINT_HISTORY)
    line = refused(capsys, ["evaluate", "--truth", truth, "--recs", run, "--metrics", "recall@5", "--points",
                            "--train", history, "--repeat", "only"], names="repeat='only'")  # fmt: skip
    assert "history" in line


# ------------------------------------------------------------------ Interactions.from_frame


def frame(**columns: object) -> pd.DataFrame:
    base = pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": [1, 2, 2, 3, 1], "rating": [5.0, 4, 3, 5, 4]})
    return base.assign(**columns)


@pytest.mark.parametrize("tz", [None, "UTC", "Europe/Paris"])
def test_datetime_timestamps_of_a_frame_are_unix_seconds_as_the_reader_gives(tmp_path: Path, tz: str | None) -> None:
    """A datetime64 column was read as its raw integers (microseconds or nanoseconds since 1970), a million
    times the seconds the file reader gives for the same dates."""
    from receval.data.interactions import Interactions
    from receval.data.loaders import load

    written = [
        "2020-01-01T00:00:00",
        "2020-01-02T12:30:00",
        "1999-12-31T23:59:59",
        "2020-01-01T00:00:01",
        "1970-01-01T00:00:00",
    ]
    dates = pd.to_datetime(written)
    if tz is not None:
        dates = dates.tz_localize(tz)
    got = Interactions.from_frame(frame(timestamp=dates), timestamp="timestamp").timestamps
    shown = [d.isoformat() for d in dates]  # the same instants as the file reader reads them (offsets kept)
    rows = frame()[["user", "item", "rating"]].values.tolist()
    lines = "".join(f"{u:g},{i:g},{r:g},{t}\n" for (u, i, r), t in zip(rows, shown, strict=True))
    path = write(tmp_path, "r.csv", "user,item,rating,timestamp\n" + lines)
    assert got is not None
    assert got.tolist() == load(path).timestamps.tolist()
    assert got[4] == (0 if tz in (None, "UTC") else -3600)  # midnight in Paris is 23:00 UTC the day before


@pytest.mark.parametrize("stamps", [[1e30, 1, 2, 3, 4], [np.inf, 1, 2, 3, 4],
                                    np.array([2**64 - 1, 1, 2, 3, 4], dtype=np.uint64)])  # fmt: skip
def test_a_frame_timestamp_past_64_bits_is_refused_by_its_row(stamps: object) -> None:
    """int64's cast made 1e30 and inf -2^63 and 2^64-1 became -1, silently."""
    from receval.data.interactions import Interactions
    from receval.errors import DataError

    with pytest.raises(DataError, match="row 0"):
        Interactions.from_frame(frame(timestamp=stamps), timestamp="timestamp")


@pytest.mark.parametrize(
    ("ratings", "says"),
    [([1e300, 4, 3, 5, 4], "row 0"), ([-np.inf, 4, 3, 5, 4], "row 0"), ([5, 4, 1e-46, 5, 4], "row 2"),
     (np.array([5, 4, 3, 5, 4 + 1j]), "complex")],
)  # fmt: skip
def test_a_frame_rating_float32_cannot_hold_is_refused(ratings: object, says: str) -> None:
    """1e300 and -inf were refused as a 'rating scale 3.0..inf' (no row); 1e-46 became 0 and a complex rating lost
    its imaginary part, both silently."""
    from receval.data.interactions import Interactions
    from receval.errors import DataError

    with pytest.raises(DataError, match=says):
        Interactions.from_frame(frame(rating=ratings))


# ------------------------------------------------------------------ receval.evaluate on odd frames (align.py's)

TRUTH_FRAME = pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": [1, 2, 2, 3, 1], "rating": [5, 4, 3, 5, 4]})
RECS_FRAME = pd.DataFrame({"user": [1, 1, 2, 2, 3], "item": [1, 3, 2, 1, 1], "score": [0.9, 0.8, 0.7, 0.6, 0.5]})


@pytest.mark.parametrize("users", [[1.0, 1.0, np.nan, 2.0, 3.0], pd.array([1, 1, None, 2, 3], dtype="Int64")])
def test_a_missing_user_id_of_the_recommendations_is_refused(users: object) -> None:
    """The truth's missing id is refused ('row 2 has no user id'); the recommendations' was dropped with a warning."""
    import receval
    from receval.errors import ReceValError

    with pytest.raises(ReceValError, match="row 2"):
        receval.evaluate(RECS_FRAME.assign(user=users), TRUTH_FRAME, "ndcg@3")


def test_a_missing_score_names_the_ids_as_written() -> None:
    import receval
    from receval.errors import ReceValError

    with pytest.raises(ReceValError) as caught:
        receval.evaluate(RECS_FRAME.assign(score=[0.9, "x", 0.7, 0.6, 0.5]), TRUTH_FRAME, "ndcg@3")
    assert "np.int64" not in str(caught.value)


# ------------------------------------------------------------------ TOML configurations

CONFIG = """name = "q"
seeds = [0]
metrics = ["ndcg@10"]
[datasets.synthetic]
generate = {{ n_users = 30, n_items = 40, n_ratings = 500, seed = {seed} }}
[split]
method = "holdout"
test_fraction = 0.2
[protocol]
name = "one-shot"
k = 10
threshold = 4
[recommenders.popularity]
"""


@pytest.mark.parametrize("command", ["check", "run"])
@pytest.mark.parametrize("seed", ["-1", "99999999999999999999"])
def test_a_generated_data_set_seed_out_of_range_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, seed: str
) -> None:
    """numpy's 'expected non-negative integer' was a traceback from check and run (seed = -1)."""
    config = write(tmp_path, "c.toml", CONFIG.format(seed=seed))
    out = tmp_path / "out"
    args = [command, config, *(["--out", out] if command == "run" else [])]
    line = refused(capsys, args, names="c.toml, line 4", out=out)  # the data set's table
    assert "seed" in line


# ------------------------------------------------------------------ column options (tables.py's)


@pytest.mark.parametrize("option", ["--user", "--rating", "--timestamp"])
def test_a_column_option_naming_no_column_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str
) -> None:
    """`data stats r.csv --user nosuch` read the file's 'user' column and said nothing. One option may name the
    columns of several files (evaluate's truth and lists), so the role's own column is still read, with a warning."""
    data = write(tmp_path, "r.csv", "user,item,rating,timestamp\n1,1,5,10\n1,2,3,11\n2,1,4,12\n")
    assert main(["data", "stats", str(data), option, "nosuch"]) == 0
    role = option.removeprefix("--")
    assert (
        f"{option} nosuch: the train file has no column 'nosuch'; its column '{role}' is read"
        in capsys.readouterr().err
    )


# ------------------------------------------------------------------ results


@pytest.mark.parametrize(("option", "value"), [("--correction", "bogus"), ("--test", "bogus")])
def test_results_refuses_an_unknown_correction_or_test_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    """With one configuration there is nothing to compare, and '--correction bogus' printed a table titled
    'bogus correction within each metric', exit 0."""
    config = write(tmp_path, "c.toml", CONFIG.format(seed=1))
    store = tmp_path / "store"
    assert main(["run", str(config), "--out", str(store)]) == 0
    capsys.readouterr()
    refused(capsys, ["results", store, "--compare", "ndcg@10", option, value], names=option)
    refused(capsys, ["results", tmp_path / "nowhere", option, value], names=option)  # before the store is read


# ------------------------------------------------------------------ aa


def ratings_file(tmp_path: Path) -> Path:
    """12 users x 8 items, every user rating 5 items (ratings 1..5): enough for a split and two fits."""
    rng = np.random.default_rng(3)
    rows = [(u, int(i), int(rng.integers(1, 6))) for u in range(12) for i in rng.choice(8, 5, replace=False)]
    return write(tmp_path, "r.csv", "user,item,rating\n" + "".join(f"{u},{i},{r}\n" for u, i, r in rows))


@pytest.mark.parametrize(("metric", "names"), [("gini@5", "system-level"), ("coverage", "system-level"),
                                               ("rmse", "predicts ratings")])  # fmt: skip
def test_aa_refuses_a_metric_without_per_user_pairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], metric: str, names: str
) -> None:
    """gini@5 was pandas' KeyError traceback; rmse of popularity (no predictions) said 'shapes (0,) and (0,)'."""
    data = ratings_file(tmp_path)
    refused(capsys, ["aa", data, "-f", "csv", "--algorithm", "popularity", "--resamples", "5", "--metric", metric],
            names=names)  # fmt: skip


# ------------------------------------------------------------------ metaeval


@pytest.mark.parametrize("strength", ["nan", "-1"])
def test_metaeval_refuses_a_strength_outside_0_1_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], strength: str
) -> None:
    """_runs distorts only strengths > 0: -1 and nan ran as the undistorted system labelled 'popularity@-1', exit 0."""
    out = tmp_path / "out"
    refused(capsys, ["metaeval", "--data", tmp_path / "absent.csv", "-f", "csv", "--strengths", f"0,{strength}",
                     "--out", out, "--quiet"], names=f"--strengths {strength}", out=out)  # fmt: skip


def test_metaeval_study_refuses_a_negative_strength() -> None:
    from receval.data.synthetic import generate
    from receval.errors import ConfigError
    from receval.studies.metaeval import metaeval_study

    data = generate(n_users=30, n_items=40, n_ratings=600, seed=0)
    with pytest.raises(ConfigError, match=r"strengths=-0\.5"):
        metaeval_study(data, ["ndcg@5"], ["random", "popularity"], k=5, strengths=[0, -0.5], fractions=[0.5])


def test_ope_refuses_a_target_named_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--targets random,random printed one row, exit 0 (a --target-table of a taken name is refused)."""
    refused(capsys, ["ope", "--synthetic", "8x5", "--rounds", "50", "--bootstrap", "0", "--targets",
                     "random,greedy,random"], names="'random' is named twice")  # fmt: skip


# ------------------------------------------------------------------ recommenders


@pytest.mark.parametrize("rate", [1.0, 1e300, float("inf")])
def test_mf_that_diverges_is_refused_not_nan(rate: float) -> None:
    """SGD at learning_rate 1 (or inf, which the config check let through) made every factor NaN: predict gave
    NaN for every pair and a run scored them."""
    from receval.data.synthetic import generate
    from receval.errors import DataError
    from receval.recommenders import make

    data = generate(n_users=30, n_items=40, n_ratings=500, seed=1)
    with pytest.raises(DataError, match="learning_rate"):
        make("mf", learning_rate=rate).fit(data)
    model = make("mf").fit(data)  # the default rate converges: finite predictions
    assert np.isfinite(model.predict(np.arange(5), np.arange(5))).all()


# ------------------------------------------------------------------ debias


def familiar_file(tmp_path: Path, flag: object = None) -> Path:
    """40 users x 12 of 30 items, 70% of the ratings flagged familiar (or every one ``flag``)."""
    rng = np.random.default_rng(7)
    rows = [(u, int(i), int(rng.integers(1, 6)), int(rng.random() < 0.7) if flag is None else flag)
            for u in range(40) for i in rng.choice(30, 12, replace=False)]  # fmt: skip
    text = "user,item,rating,familiar\n" + "".join(f"{u},{i},{r},{f}\n" for u, i, r, f in rows)
    return write(tmp_path, "fam.csv", text)


@pytest.mark.parametrize(
    ("option", "value"),
    [("--algorithms", "popularity,popularity"), ("--estimators", "naive,ips,ips"),
     ("--propensities", "popularity,popularity")],
)  # fmt: skip
def test_debias_refuses_a_name_given_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    """popularity,popularity ranked one system and printed pandas' 'Empty DataFrame'; ips,ips failed with 'two 1-d
    arrays of equal length are needed, got shapes (4,) and (8,)'; a repeated propensity model ran twice."""
    data = familiar_file(tmp_path)
    args = ["debias", "--data", data, "-f", "csv", "--algorithms", "popularity,random", option, value]
    refused(capsys, args, names=f"{option} {value}: ")


def test_debias_without_a_familiar_rating_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """It said 'cannot fit MostPopular on empty training data'."""
    data = familiar_file(tmp_path, flag=0)
    refused(capsys, ["debias", "--data", data, "-f", "csv", "--algorithms", "popularity,random"],
            names="no rating is flagged familiar")  # fmt: skip


# ------------------------------------------------------------------ written tables read back


@pytest.mark.parametrize("suffix", [".pq", ".parq", ".tab", ".parquet", ".tsv", ".txt", ".csv"])
def test_a_log_written_under_any_reader_extension_reads_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], suffix: str
) -> None:
    """--log-out log.pq wrote CSV text (write_frame knew only .parquet, .tsv, .txt) that --log log.pq refused as
    'not a readable Parquet file'; log.tab was read as one column 'user'."""
    from receval.simulate.logged import read_log

    out = tmp_path / f"log{suffix}"
    args = ["ope", "--synthetic", "8x5", "--rounds", "40", "--bootstrap", "0", "--targets", "random", "--seed", "1"]
    assert main([*args, "--log-out", str(out)]) == 0
    capsys.readouterr()
    assert main([*args, "--log-out", str(tmp_path / "plain.csv")]) == 0
    assert read_log(out).equals(read_log(tmp_path / "plain.csv"))  # the same 40 rounds, whatever the extension
    assert main([*args, "--log", str(out)]) == 0


@pytest.mark.parametrize("name", ["", "  "])
def test_an_empty_unknown_group_name_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    """--unknown-group '' pooled the users without a group under a group named ''."""
    truth, recs = write(tmp_path, "t.tsv", TRUTH), write(tmp_path, "r.tsv", RECS)
    groups = write(tmp_path, "g.csv", "user,group\n1,a\n2,a\n3,b\n4,b\n")
    refused(capsys, ["evaluate", "--truth", truth, "--recs", recs, "--metrics", "ndcg@3", "--user-groups", groups,
                     "--unknown-group", name], names="--unknown-group")  # fmt: skip


# ------------------------------------------------------------------ split


def test_split_refuses_a_cut_instant_with_a_test_fraction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--at with --test-fraction 0.5 cut at the instant and ignored the 0.5, silently (76% of pairs in test)."""
    data = write(tmp_path, "r.csv", "user,item,rating,timestamp\n" + "".join(
        f"{u},{i},{1 + (u + i) % 5},{100 * u + i}\n" for u in range(1, 9) for i in range(1, 6)
    ))  # fmt: skip
    out = tmp_path / "out"
    refused(capsys, ["split", data, "-o", out, "--method", "temporal", "--at", "300", "--test-fraction", "0.5"],
            names="--test-fraction 0.5", out=out)  # fmt: skip
    assert main(["split", str(data), "-o", str(out), "--method", "temporal", "--at", "300"]) == 0
    test = pd.read_csv(out / "test.tsv", sep="\t")
    assert (test["timestamp"] >= 300).all() and len(test) == 30  # users 3..8: the instant alone cuts


@pytest.mark.parametrize("command", ["check", "run"])
@pytest.mark.parametrize(
    ("old", "new", "line"),
    [("[recommenders.popularity]", '[recommenders.""]\nalgorithm = "popularity"', "line 13"),
     ("[recommenders.popularity]", '[recommenders."pop "]\nalgorithm = "popularity"', "line 13"),
     ("[datasets.synthetic]", '[datasets.""]', "line 4")],
)  # fmt: skip
def test_an_empty_or_padded_label_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, old: str, new: str, line: str
) -> None:
    """A recommender labelled '' vanished from the results ('synthetic/one-shot'), a data set '' showed as
    '/popularity()', and 'pop ' looked like 'pop'."""
    config = write(tmp_path, "c.toml", CONFIG.format(seed=1).replace(old, new))
    out = tmp_path / "out"
    refused(capsys, [command, config, *(["--out", out] if command == "run" else [])], names=f"c.toml, {line}",
            out=out)  # fmt: skip


# ------------------------------------------------------------------ evaluate_model


@pytest.fixture(scope="module")
def split_data() -> tuple[object, object]:
    from receval.data.synthetic import generate
    from receval.split import holdout

    return holdout(generate(n_users=30, n_items=40, n_ratings=500, seed=1), 0.2, seed=0)


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [({"k": 0}, "k=0: give an integer"), ({"k": True}, "k=True"), ({"k": 10.5}, "k=10.5"),
     ({"seed": -1}, "seed=-1"), ({"model": "popularity"}, "model must be a recommender"),
     ({"model": None}, "model must be a recommender"), ({"empty_test": True}, "test has no ratings")],
)  # fmt: skip
def test_evaluate_model_refuses_odd_arguments_first(split_data: tuple[object, object], kwargs: dict, says: str) -> None:
    """k=0 said 'the lists hold k = 0 items', 10.5 was cut to 10 silently, seed=-1 and a model given by name were
    tracebacks (numpy's ValueError, 'str' object has no attribute 'fit'), an empty test gave {'ndcg@10': nan}."""
    import re

    from receval.errors import ReceValError
    from receval.evaluation import evaluate_model
    from receval.recommenders import make

    train, test = split_data
    if kwargs.pop("empty_test", False):
        test = test.subset(np.zeros(test.n_ratings, dtype=bool))  # type: ignore[attr-defined]
    model = kwargs.pop("model", make("popularity"))
    with pytest.raises(ReceValError, match=re.escape(says)):
        evaluate_model(model, train, test, ["ndcg@10"], **kwargs)


@pytest.mark.parametrize("threshold", ["4", None])
def test_a_threshold_that_is_not_a_number_is_named_so(threshold: object) -> None:
    """threshold='4' was refused as 'threshold=4 is outside the rating scale 3..5', which it is not."""
    import receval
    from receval.errors import ConfigError
    from receval.validate import check_threshold

    truth = pd.DataFrame({"user": [1, 1, 2], "item": [1, 2, 2], "rating": [5, 4, 3]})
    recs = pd.DataFrame({"user": [1, 2], "item": [1, 2], "score": [1.0, 1.0]})

    with pytest.raises(ConfigError, match=r"give a number on the rating scale 1\.\.5"):
        check_threshold(threshold, 1, 5)
    if threshold is not None:
        with pytest.raises(ConfigError, match="give a number"):
            receval.evaluate(recs, truth, "ndcg@3", threshold=threshold)


# ------------------------------------------------------------------ error metrics


def test_an_error_metric_that_overflows_is_refused_not_inf(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A prediction of 1e200 made rmse inf, printed (and written as JSON's invalid 'Infinity')."""
    truth = write(tmp_path, "t.tsv", "user\titem\trating\n1\t1\t4\n1\t2\t3\n2\t1\t5\n")
    preds = write(tmp_path, "p.tsv", "user\titem\trating\tprediction\n1\t1\t4\t1e200\n1\t2\t3\t3.5\n2\t1\t5\t4\n")
    refused(capsys, ["evaluate", "--truth", truth, "--predictions", preds, "--metrics", "rmse"], names="overflow")
    # a large error whose square float64 holds is a number: rmse by hand = sqrt((1e150 - 4)^2 / 3 + ...)
    big = write(tmp_path, "b.tsv", "user\titem\trating\tprediction\n1\t1\t4\t1e150\n1\t2\t3\t3\n2\t1\t5\t5\n")
    assert main(["evaluate", "--truth", str(truth), "--predictions", str(big), "--metrics", "rmse", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rmse"] == pytest.approx(1e150 / math.sqrt(3))


@pytest.mark.parametrize("side", ["truth", "recommendations"])
def test_a_row_without_its_point_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], side: str) -> None:
    """An empty point cell made a point 'nan' of its own: the truth row was scored as a missed point (recall 2/3)."""
    truth_rows = ["u1\t1\t0", "u1\t2\t1", "u2\t2\t0"]
    rec_rows = ["u1\t1\t1\t0", "u1\t2\t1\t1", "u2\t2\t1\t0"]
    if side == "truth":
        truth_rows[1] = "u1\t2\t"
    else:
        rec_rows[1] = "u1\t2\t1\t"
    truth = write(tmp_path, "t.tsv", "user\titem\tpoint\n" + "\n".join(truth_rows) + "\n")
    recs = write(tmp_path, "r.tsv", "user\titem\tscore\tpoint\n" + "\n".join(rec_rows) + "\n")
    refused(capsys, ["evaluate", "--truth", truth, "--recs", recs, "--metrics", "recall@5", "--points"],
            names=f"the {side} have 1 row(s) without a point (first: row 2)")  # fmt: skip


def test_ease_refuses_an_infinite_l2() -> None:
    """l2=inf passed the 'positive number' check and made every score NaN."""
    from receval.data.synthetic import generate
    from receval.errors import ConfigError
    from receval.recommenders import make

    data = generate(n_users=30, n_items=40, n_ratings=500, seed=1)
    with pytest.raises(ConfigError, match="l2 must be a positive number, finite"):
        make("ease", l2=float("inf")).fit(data)
    assert np.isfinite(make("ease", l2=1e300).fit(data).score(np.arange(3))).all()  # large but finite: a number


def test_slim_refuses_max_iter_past_the_iteration_cap() -> None:
    """max_iter=10**12 was the solver's 'OverflowError: value too large to convert to unsigned int', a traceback."""
    from receval.data.synthetic import generate
    from receval.errors import ConfigError
    from receval.recommenders import make
    from receval.recommenders.base import MAX_ITERATIONS

    data = generate(n_users=30, n_items=40, n_ratings=500, seed=1)
    with pytest.raises(ConfigError, match="max_iter=1000000000000"):
        make("slim", max_iter=10**12).fit(data)
    make("slim", max_iter=MAX_ITERATIONS, topK=5).fit(data)  # the cap itself is allowed


# ------------------------------------------------------------------ protocols-study


def test_a_study_of_one_setting_draws_no_empty_heat_map(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """One protocol and one core drew a 0 x 0 τ heat map and printed matplotlib's two 'identical low and high
    xlims/ylims' warnings."""
    data = ratings_file(tmp_path)
    out = tmp_path / "out"
    status = main(["protocols-study", str(data), "-f", "csv", "--algorithms", "popularity,random", "--protocols",
                   "random", "--cores", "0", "--k", "3", "--metrics", "ndcg@3", "--out", str(out)])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.err == ""
    assert not (out / "tau.png").exists() and (out / "values.png").exists()
    assert "no pair of rankings to compare" in (out / "report.html").read_text()


# ------------------------------------------------------------------ evaluate's options before its files


@pytest.mark.parametrize(("option", "value"), [("--negative-threshold", "nan"), ("--negative-threshold", "-inf")])
def test_evaluate_checks_its_numbers_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    """--negative-threshold nan was refused only after the files were read and aligned (their warnings printed
    first)."""
    refused(capsys, ["evaluate", "--truth", tmp_path / "absent.csv", "--recs", tmp_path / "absent.tsv", "--metrics",
                     "ndcg@10", option, value], names=f"{option} {value}")  # fmt: skip


# ------------------------------------------------------------------ audit


@pytest.mark.parametrize(("test_times", "after", "affected"), [(["2019-12-31", "2021-01-01"], 2 / 3, 0.5),
                                                               (["100", "200"], 1.0, 1.0)])  # fmt: skip
def test_audit_reads_dates_as_seconds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], test_times: list[str], after: float, affected: float
) -> None:
    """ISO dates were `int() argument must be ... not 'datetime.date'`, a traceback. By hand: user 1's first test
    time (2019-12-31) precedes both of its training rows (2 of 3 rows, 1 of 2 users); epoch seconds 100 and 200
    precede every training date."""
    train = write(tmp_path, "tr.tsv", "user\titem\ttimestamp\n1\t1\t2020-01-01\n1\t2\t2020-01-02\n2\t1\t2020-01-03\n")
    test = write(tmp_path, "te.tsv", f"user\titem\ttimestamp\n1\t3\t{test_times[0]}\n2\t2\t{test_times[1]}\n")
    assert main(["audit", "--train", str(train), "--test", str(test), "--json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["train_after_test"] == pytest.approx(after) and body["users_affected"] == pytest.approx(affected)


def test_audit_refuses_a_timestamp_past_64_bits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """1e30 became -2^63 in the int64 cast and the audit ran on it."""
    train = write(tmp_path, "tr.tsv", "user\titem\ttimestamp\n1\t1\t1e30\n1\t2\t5\n")
    test = write(tmp_path, "te.tsv", "user\titem\ttimestamp\n1\t3\t100\n2\t2\t200\n")
    refused(capsys, ["audit", "--train", train, "--test", test], names="1e+30 (row 1) is outside the 64-bit range")


@pytest.mark.parametrize(
    ("given", "says"),
    [("series", "got Series"), ("dict", "got dict"), ("none", "got NoneType"), ("twice", "columns named 'user'"),
     ("scale", "is not a RatingScale")],
)  # fmt: skip
def test_from_frame_refuses_what_is_not_a_table(given: str, says: str) -> None:
    """A Series, a dict or None was an AttributeError ('no attribute columns'), two 'user' columns pandas' 'Data must
    be 1-dimensional', scale=(1, 5) an AttributeError deep in the scale check."""
    from receval.data.interactions import Interactions
    from receval.errors import ReceValError

    base = frame()
    kwargs: dict = {}
    table: object = {"series": base["user"], "dict": base.to_dict("list"), "none": None,
                     "twice": pd.concat([base, base[["user"]]], axis=1)}.get(given, base)  # fmt: skip
    if given == "scale":
        kwargs["scale"] = (1, 5)
    with pytest.raises(ReceValError, match=says):
        Interactions.from_frame(table, **kwargs)


def test_a_log_index_that_is_not_a_whole_number_is_named_by_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """'column user must hold non-negative integers' named no line (the log's other checks name theirs)."""
    bad = bad_log(tmp_path, capsys, 5, 1, "1.5")
    refused(capsys, ["ope", "--synthetic", "8x5", "--bootstrap", "0", "--targets", "random", "--log", bad],
            names="column user must hold non-negative integers (first 1.5 at line 6)")  # fmt: skip


@pytest.mark.parametrize("own", ["experiment.json", "tasks.parquet"])
def test_results_cd_diagram_over_a_file_of_its_store_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], own: str
) -> None:
    """--cd-diagram STORE/experiment.json was checked as any output file: the figure would replace the store's
    record (report --out already refuses this)."""
    config = write(tmp_path, "c.toml", CONFIG.format(seed=1))
    store = tmp_path / "store"
    assert main(["run", str(config), "--out", str(store)]) == 0
    capsys.readouterr()
    before = (store / own).read_bytes()
    refused(capsys, ["results", store, "--friedman", "ndcg@10", "--cd-diagram", store / own],
            names=f"the result store's {own}")  # fmt: skip
    assert (store / own).read_bytes() == before


def test_check_names_a_fold_without_its_test_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A fold-1/ holding only train.tsv was skipped and the folder read as one split: 'FOLDER/train.tsv: no such
    file', a file nobody wrote."""
    fold = tmp_path / "split" / "fold-1"
    fold.mkdir(parents=True)
    write(fold, "train.tsv", "user\titem\trating\n1\t1\t5\n2\t1\t3\n")
    refused(capsys, ["check", tmp_path / "split"], names="fold-1: a fold of a split folder holds train.tsv and "
            "test.tsv; test.tsv is missing")  # fmt: skip
