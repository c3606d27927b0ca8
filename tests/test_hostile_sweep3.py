"""A third sweep of hostile input: what the first two (test_hostile_inputs, test_bad_input, test_os_errors) left.

Line ends of old Macs, a field longer than Python's csv module takes, a table of many
columns, a fold count past the data, an output path that is one of the command's
inputs. Each is refused with exit status 2 and one ``error: ...`` line naming the file
(line) or the option, before anything is written; or, where the input is legal, read as
the plain file is read.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from receval.cli import main
from test_hostile_inputs import refused

RATINGS = "user,item,rating\nu1,i1,4\nu2,i2,3\nu1,i2,5\n"


def stats(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    """``receval data stats PATH --json``: exit 0, its stdout."""
    status = main(["data", "stats", str(path), "--json"])
    captured = capsys.readouterr()
    assert status == 0, captured.err + captured.out
    return captured.out


# ------------------------------------------------------------------ the text reader
def test_old_mac_line_ends_are_named_not_a_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Lines ended by a carriage return alone were one line to the header reader: csv's _csv.Error, a traceback."""
    path = tmp_path / "mac.csv"
    path.write_bytes(RATINGS.replace("\n", "\r").encode())
    out = tmp_path / "split"
    line = refused(capsys, ["split", path, "--out", out], names="mac.csv, line 1")
    assert "carriage return" in line and "\\n" in line


def test_crlf_line_ends_still_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain, crlf = tmp_path / "plain.csv", tmp_path / "crlf.csv"
    plain.write_text(RATINGS)
    crlf.write_bytes(RATINGS.replace("\n", "\r\n").encode())
    assert stats(capsys, crlf).replace("crlf", "plain") == stats(capsys, plain)


def test_a_10_mb_id_is_read_as_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A field past Arrow's 1 MiB block (and csv's 128 KiB field limit) gave a traceback from the error path."""
    long_id = "x" * 10_000_000
    path = tmp_path / "long.csv"
    path.write_text(f"user,item,rating\nu1,{long_id},4\nu2,i2,3\n")
    out = tmp_path / "split"
    assert main(["split", str(path), "--out", str(out), "--seed", "1"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    written = (out / "train.tsv").read_text() + (out / "test.tsv").read_text()
    assert f"u1\t{long_id}\t4" in written


def test_a_bad_value_after_a_long_line_is_named_by_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "long.csv"
    path.write_text(f"user,item,rating\nu1,{'x' * 3_000_000},4\nu2,i2,lots\n")
    refused(capsys, ["data", "stats", path], names="long.csv, line 3, column rating: rating 'lots' is not a number")


def test_a_header_longer_than_a_block_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 2 MB header (a long column name) was Arrow's "Empty CSV file or block": 'could not read the table'."""
    plain, wide = tmp_path / "plain.csv", tmp_path / "wide.csv"
    plain.write_text(RATINGS)
    rows = RATINGS.splitlines()
    wide.write_text("\n".join([rows[0] + ",c" + "x" * 2_000_000, *(r + ",0" for r in rows[1:])]) + "\n")
    assert stats(capsys, wide).replace("wide", "plain") == stats(capsys, plain)


def test_a_table_of_30000_columns_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unused columns are carried along: combining them one set_column at a time (and a list.count per column
    name) was quadratic in the columns, 74 s for 20,000 of them (1 s now; 1e6 columns take 35 s, Arrow's own)."""
    n = 30_000
    path = tmp_path / "wide.csv"
    header = ",".join(["user", "item", "rating", *(f"c{j}" for j in range(n))])
    zeros = ",".join(["0"] * n)
    path.write_text(header + "\n" + "".join(f"u{u},i{u % 2},{u % 5 + 1},{zeros}\n" for u in range(3)))
    assert '"n_ratings": 3' in stats(capsys, path)


# ------------------------------------------------------------------ options past the data
@pytest.mark.parametrize("folds", ["11", "99999999999999999999"])
def test_more_folds_than_a_users_ratings_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], folds: str
) -> None:
    """--folds 10^20 gave a traceback (OverflowError: the fold arithmetic in int64) and --folds 11 over users of 10
    ratings wrote folds that test some users in none: `receval split` skipped the check a configuration's folds get
    (check_folds), now made by split_by_name for every caller."""
    path = tmp_path / "r.csv"
    rows = "".join(f"u{u},i{i},{1 + (u + i) % 5}\n" for u in range(3) for i in range(10))
    path.write_text("user,item,rating\n" + rows)
    out = tmp_path / "split"
    args = ["split", path, "--method", "kfold", "--folds", folds, "--out", out]
    line = refused(capsys, args, names=f"--folds {folds}")
    assert "(the fewest: 10)" in line and "--folds 10 or fewer" in line
    for core in ("2", "99999999999999999999"):
        args = ["split", path, "--method", "kfold", "--folds", folds, "--core", core, "--out", out]
        refused(capsys, args, names=f"--folds {folds}" if core == "2" else "core=")


def test_as_many_folds_as_ratings_each_test_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "r.csv"
    path.write_text(RATINGS.replace("u2,i2,3", "u1,i3,3"))
    out = tmp_path / "split"
    assert main(["split", str(path), "--method", "kfold", "--folds", "3", "--out", str(out)]) == 0
    capsys.readouterr()
    tests = [(out / f"fold-{j}" / "test.tsv").read_text().splitlines()[1:] for j in (1, 2, 3)]
    assert sorted(len(t) for t in tests) == [1, 1, 1] and len({*tests[0], *tests[1], *tests[2]}) == 3


# ------------------------------------------------------------------ outputs
def _ratings(tmp_path: Path) -> dict[str, Path]:
    """Ratings of 6 users on 8 items, split in two files, a run and a users list."""
    rows = [f"u{u},i{(u + j) % 8},{1 + (u * j) % 5}" for u in range(6) for j in range(5)]
    files = {name: tmp_path / f"{name}.csv" for name in ("train", "test", "recs", "users")}
    files["train"].write_text("user,item,rating\n" + "\n".join(r for j, r in enumerate(rows) if j % 5) + "\n")
    files["test"].write_text("user,item,rating\n" + "\n".join(r for j, r in enumerate(rows) if not j % 5) + "\n")
    files["recs"].write_text("user,item,score\n" + "".join(f"u{u},i{j},{8 - j}\n" for u in range(6) for j in range(8)))
    files["users"].write_text("u1\nu2\n")
    return files


@pytest.mark.parametrize(
    ("command", "input_option", "output_option"),
    [
        (["recommend", "--algorithm", "popularity", "--k", "3", "--train", "{train}"], "--train", "--out"),
        (["recommend", "--algorithm", "popularity", "--k", "3", "--train", "{train}", "--test", "{test}"], "--test",
         "--out"),
        (["recommend", "--algorithm", "popularity", "--k", "3", "--train", "{train}", "--users", "{users}"], "--users",
         "--out"),
        (["predict", "--algorithm", "biases", "--train", "{train}", "--test", "{test}"], "--test", "--out"),
        (["evaluate", "--metrics", "ndcg@3", "--truth", "{test}", "--recs", "{recs}"], "--recs", "--per-user"),
        (["evaluate", "--metrics", "ndcg@3", "--truth", "{test}", "--recs", "{recs}", "--points"], "--truth",
         "--per-user"),
    ],
)  # fmt: skip
def test_an_output_that_is_an_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], input_option: str, output_option: str
) -> None:
    """`recommend --train t.csv --out t.csv` replaced the training data with the lists (exit 0); the same for
    predict's --test and evaluate's --per-user: now exit 2 naming both options, and the input is unchanged."""
    files = _ratings(tmp_path)
    args = [a.format(**{k: str(v) for k, v in files.items()}) for a in command]
    target = Path(args[args.index(input_option) + 1])
    before = target.read_bytes()
    alias = tmp_path / "sub" / ".." / target.name  # another spelling of the same file
    (tmp_path / "sub").mkdir()
    refused(capsys, [*args, output_option, alias], names=f"{output_option} {alias}: is also {input_option}")
    assert target.read_bytes() == before


def test_aa_sizes_past_memory_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--sizes 1e12 gave a traceback (numpy's _ArrayMemoryError: 218 TiB for the first bootstrap sample)."""
    files = _ratings(tmp_path)
    args = ["aa", files["train"], "--algorithm", "random", "--metric", "ndcg@3", "--sizes", "1,1e12"]
    line = refused(capsys, args, names="--sizes 1e+12")
    assert "of memory" in line and "smaller" in line


@pytest.mark.parametrize("effect", [1e10, 1e308])
def test_a_huge_effect_has_power_one_not_nan(effect: float) -> None:
    """--effect 1e308 printed 'power nan' (scipy's noncentral t is NaN from a noncentrality of about 1e10)."""
    from scipy import stats

    from receval.stats.power import ttest_power

    assert ttest_power(effect, sd=0.3, n=30) == 1.0
    assert ttest_power(3e8, sd=1.0, n=2) == 1.0  # scipy still computes it: the same answer on either side
    assert stats.nct.sf(stats.t.isf(0.025, 1), 1, 3e8) == 1.0


def test_power_of_a_huge_effect_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    files = _ratings(tmp_path)
    args = ["power", "--truth", files["test"], "--recs", files["recs"], "--metric", "ndcg@3", "--effect", "1e308"]
    assert main([*map(str, args), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["power"] == 1.0 and result["n_needed"] == 2


# ------------------------------------------------------------------ parameters checked before the work
@pytest.mark.parametrize(
    ("param", "names"),
    [
        ("item-bandit-egreedy:epsilon=2", "item-bandit-egreedy (ItemBandit): epsilon=2.0 must lie in [0, 1]"),
        ("knn-bandit:k=0", "knn-bandit (KNNBandit): k=0 must be a whole number"),
        ("knn-bandit:alpha0=0", "knn-bandit (KNNBandit): the Beta prior needs alpha0"),
        ("item-bandit-egreedy:refit_every=x", "item-bandit-egreedy: refit_every='x': give an integer of at least 1"),
    ],
)
def test_a_bad_simulation_parameter_is_refused_before_any_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], param: str, names: str
) -> None:
    """A bandit's parameters were checked by its fit: the algorithms before it in --algorithms were simulated first
    (their warnings printed) and the error did not say whose parameter it was; refit_every=x was a traceback
    (ValueError from int())."""
    files = _ratings(tmp_path)
    out = tmp_path / "cyclic"
    args = ["simulate", "--data", files["train"], "--rounds", "2", "--threshold", "3", "--out", out]
    algorithms = "random,popularity,knn-bandit,item-bandit-egreedy"
    refused(capsys, [*args, "--algorithms", algorithms, "--param", param], names=names, out=out)


@pytest.mark.parametrize(
    ("options", "names"),
    [
        (["--users", "99999999999", "--items", "99999999999", "--ratings", "5"], "of memory"),
        (["--users", "5", "--items", "9", "--ratings", "20"], "--items 9: the demo's lists hold 10 items"),
        (["--users", "2", "--items", "10", "--ratings", "1000"], "--ratings 1000: more than the 20 (user, item)"),
    ],
)
def test_demo_sizes_that_cannot_run_are_refused_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str], names: str
) -> None:
    """--users/--items 1e11 gave a traceback (numpy _ArrayMemoryError, 745 GiB); --items 9 printed the data step and
    then 'k=10 is larger than the catalogue' (demo has no --k); --ratings past users x items said 'use complete=True'
    (demo has no such option)."""
    out = tmp_path / "demo"
    refused(capsys, ["demo", *options, "--rounds", "1", "--out", out], names=names, out=out)


@pytest.mark.parametrize(
    ("command", "name"),
    [
        (["split", "{data}", "--seed", "1"], "train.tsv"),
        (["split", "{data}", "--method", "kfold", "--folds", "2"], "fold-2/test.tsv"),
        (["data", "prepare", "{data}", "--core", "1", "--format", "tsv"], "ratings.tsv"),
    ],
)
def test_an_output_folder_whose_file_is_the_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], name: str
) -> None:
    """`data prepare folder/ratings.tsv --out folder` replaced the data with its k-core (exit 0); `split
    folder/train.tsv --out folder` replaced the data with its training part."""
    data = tmp_path / "out" / name
    data.parent.mkdir(parents=True)
    data.write_text(
        "user\titem\trating\n" + "".join(f"u{u}\ti{i}\t{1 + (u + i) % 5}\n" for u in range(4) for i in range(4))
    )
    before = data.read_bytes()
    args = [a.format(data=data) for a in command]
    refused(capsys, [*args, "--out", tmp_path / "out"], names=f"its {name} would replace the data file")
    assert data.read_bytes() == before
    assert main([*args, "--out", str(tmp_path / "elsewhere")]) == 0  # the same command into another folder


def test_debias_names_a_bad_familiar_flag_by_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A 'familiar' column holding 'maybe' was reported as "no column 'familiar'" (the loader's line hidden)."""
    path = tmp_path / "fam.csv"
    path.write_text("user,item,rating,familiar\nu1,i1,4,1\nu1,i2,4,maybe\n")
    refused(capsys, ["debias", "--data", path, "-f", "csv"], names="fam.csv, line 3, column familiar: flag 'maybe'")
    path.write_text("user,item,rating\nu1,i1,4\n")
    refused(capsys, ["debias", "--data", path, "-f", "csv"], names="no column 'familiar' flagging the MNAR")


# ------------------------------------------------------------------ configurations
CONFIG = """name = "q"
seeds = [0]
metrics = ["ndcg@10"]

[datasets.synthetic]
generate = { n_users = 40, n_items = 60, n_ratings = 600, seed = 42 }

[protocol]
name = "one-shot"
k = 10

[recommenders.popularity]
"""


@pytest.mark.parametrize("command", ["check", "run", "tune"])
def test_an_empty_seed_list_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """seeds = [] passed `receval check` (its findings only, exit 1) while `run` then refused: 'the grid expands to
    zero tasks'; now the configuration is refused at its line by every command that reads it."""
    path = tmp_path / "c.toml"
    path.write_text(CONFIG.replace("seeds = [0]", "seeds = []"))
    refused(capsys, [command, path], names="c.toml, line 2: seeds = []: give at least one seed")


@pytest.fixture
def damaged_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A finished run whose every part file was then overwritten (a disk error, a bad copy)."""
    config, out = tmp_path / "c.toml", tmp_path / "results"
    config.write_text(CONFIG + "\n[recommenders.random]\n")
    assert main(["run", str(config), "--out", str(out)]) == 0
    capsys.readouterr()
    for part in (out / "parts").iterdir():
        part.write_text("garbage")
    return out


def test_results_of_a_store_with_every_task_damaged(damaged_store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--compare and --failed gave tracebacks (KeyError: 'status': the rebuilt tasks table had no columns)."""
    refused(capsys, ["results", damaged_store, "--compare", "ndcg@10"], names="holds no task that finished ok")
    assert main(["results", str(damaged_store), "--failed"]) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err and captured.out.count("damaged:") == 2, captured.out


# ------------------------------------------------------------------ timestamps
@pytest.mark.parametrize(("written", "seconds"), [("9999-12-31", 253402214400), ("0001-01-01T00:00:00Z", -62135596800),
                                                  ("2262-04-12", 9223372800), ("1677-09-21", -9223372800)])  # fmt: skip
def test_a_date_outside_pandas_nanoseconds_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, seconds: int
) -> None:
    """ISO dates before 1677-09-21 or after 2262-04-11 gave a traceback (pandas OutOfBoundsDatetime); now the
    Unix seconds Python's datetime gives."""
    import datetime

    assert int(datetime.datetime.fromisoformat(written).replace(tzinfo=datetime.UTC).timestamp()) == seconds
    path = tmp_path / "t.csv"
    path.write_text(f"user,item,rating,timestamp\nu1,i1,4,{written}\nu1,i2,3,2020-01-01\n")
    out = tmp_path / "split"
    assert main(["split", str(path), "--method", "temporal", "--test-fraction", "0.5", "--out", str(out)]) == 0
    capsys.readouterr()
    rows = (out / "train.tsv").read_text() + (out / "test.tsv").read_text()
    assert f"u1\ti1\t4.0\t{seconds}\n" in rows


@pytest.mark.parametrize("written", ["99999999999999999999", "1e400", "-1e19", "nan", "inf"])
@pytest.mark.parametrize("other", ["2020-01-01", "100"])  # the date path and the all-numbers path
def test_a_timestamp_past_64_bits_is_refused_at_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], written: str, other: str
) -> None:
    """It was written as -9223372036854775808 (int64's minimum: a float cast), a silently changed timestamp."""
    path = tmp_path / "t.csv"
    path.write_text(f"user,item,rating,timestamp\nu1,i2,3,{other}\nu1,i1,4,{written}\n")
    out = tmp_path / "split"
    args = ["split", path, "--method", "temporal", "--test-fraction", "0.5", "--out", out]
    line = refused(capsys, args, names="t.csv, line 3, column timestamp: timestamp", out=out)
    assert "64-bit" in line or "neither an integer nor a date" in line or "missing" in line


def test_parquet_timestamps_of_milliseconds_and_unsigned_64_bits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A timestamp[ms] column with a fraction of a second gave a traceback (ArrowInvalid: the cast to seconds would
    lose data): now cut to whole seconds, as a float column is; a uint64 2^64 - 1 was written as -1, silently."""
    import datetime

    import pyarrow as pa
    import pyarrow.parquet as pq

    base = {"user": ["u1", "u1"], "item": ["i1", "i2"], "rating": [4.0, 5.0]}
    stamps = pa.array(
        [datetime.datetime(2020, 1, 1, 0, 0, 0, 500000), datetime.datetime(2021, 1, 1)], pa.timestamp("ms")
    )
    pq.write_table(pa.table({**base, "timestamp": stamps}), tmp_path / "ms.parquet")
    out = tmp_path / "split"
    args = ["split", str(tmp_path / "ms.parquet"), "--method", "temporal", "--test-fraction", "0.5", "--out", str(out)]
    assert main(args) == 0
    capsys.readouterr()
    assert (out / "train.tsv").read_text().splitlines()[1] == "u1\ti1\t4.0\t1577836800"
    pq.write_table(pa.table({**base, "timestamp": pa.array([2**64 - 1, 3], pa.uint64())}), tmp_path / "u64.parquet")
    refused(capsys, ["data", "stats", tmp_path / "u64.parquet"], names="row 1: timestamp 1.84467e+19 is outside")


@pytest.mark.parametrize("seed", ["-1", "99999999999999999999"])
@pytest.mark.parametrize("command", ["compare", "power"])
def test_a_seed_out_of_range_is_refused_by_compare_and_power(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, seed: str
) -> None:
    """compare --seed -1 (and power --test permutation --seed -1) gave a traceback (numpy's ValueError: expected
    non-negative integer); a seed past 2^32 was taken while every other command refuses it."""
    files = _ratings(tmp_path)
    if command == "compare":
        args = ["compare", "--truth", files["test"], files["recs"], f"b={files['recs']}", "--metrics", "ndcg@3"]
    else:
        args = [
            "power",
            "--truth",
            files["test"],
            "--recs",
            files["recs"],
            "--metric",
            "ndcg@3",
            "--test",
            "permutation",
        ]
    refused(capsys, [*args, "--seed", seed], names=f"--seed {seed}: a seed is an integer from 0 to 4294967295")


def test_compare_report_over_a_run_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`compare ... a.csv b.csv --report a.csv` replaced the run a.csv with the HTML report (exit 0)."""
    files = _ratings(tmp_path)
    other = tmp_path / "other.csv"
    other.write_bytes(files["recs"].read_bytes())
    before = files["recs"].read_bytes()
    args = ["compare", "--truth", files["test"], files["recs"], other, "--metrics", "ndcg@3", "--report", files["recs"]]
    refused(capsys, args, names="--report")
    assert files["recs"].read_bytes() == before


def test_report_over_a_file_of_its_result_store_is_refused(
    damaged_store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report results --out results/experiment.json` wrote the HTML over the store's manifest (exit 0); over a part
    file it damaged a finished task."""
    manifest = damaged_store / "experiment.json"
    before = manifest.read_bytes()
    args = ["report", damaged_store, "--no-data", "--out", manifest]
    refused(capsys, args, names="is also the result store's experiment.json")
    assert manifest.read_bytes() == before
    assert main(["report", str(damaged_store), "--no-data"]) == 0  # its own report.html, twice
    assert main(["report", str(damaged_store), "--no-data", "--out", str(damaged_store / "report.html")]) == 0


@pytest.mark.parametrize(("at", "names"), [("inf", "--at inf: not a date"), ("-inf", "--at -inf: not a date"),
                                           ("1e30", "--at 1e30: outside the 64-bit range")])  # fmt: skip
def test_a_temporal_cut_at_infinity_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], at: str, names: str
) -> None:
    """split --method temporal --at inf gave a traceback (OverflowError: cannot convert float infinity to integer)."""
    path = tmp_path / "t.csv"
    path.write_text("user,item,rating,timestamp\nu1,i1,4,100\nu1,i2,3,200\n")
    out = tmp_path / "split"
    refused(capsys, ["split", path, "--method", "temporal", "--at", at, "--out", out], names=names, out=out)


# ------------------------------------------------------------------ counts past memory
def test_ope_rounds_past_memory_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """ope --rounds 999999999999 gave a traceback (numpy _ArrayMemoryError, 7.3 TiB for the drawn users)."""
    files = _ratings(tmp_path)
    args = ["ope", "--data", files["train"], "-f", "csv", "--rounds", "999999999999", "--bootstrap", "0"]
    refused(capsys, args, names="a log of 999,999,999,999 rounds needs")


def test_barrier_bootstrap_past_memory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """barrier --bootstrap 99999999999999999999 gave a traceback (ValueError: Maximum allowed dimension exceeded)."""
    path = tmp_path / "rr.csv"
    path.write_text("user,item,rating\nu1,i1,4\nu1,i1,5\nu2,i1,3\nu2,i1,3\n")
    args = ["barrier", "--data", path, "-f", "csv", "--bootstrap", "99999999999999999999"]
    refused(capsys, args, names="99,999,999,999,999,999,999 bootstrap replicates needs")


def test_the_exact_permutation_test_enumerates_in_chunks() -> None:
    """aa --permutations 1e20 on 30 users gave a traceback (numpy _ArrayMemoryError, 240 GiB for the 2^30 sign
    patterns at once); chunked, the p-value is the full enumeration's."""
    import numpy as np

    from receval.stats import significance
    from receval.stats.significance import permutation_test

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=18), rng.normal(size=18)
    d = a - b
    patterns = ((np.arange(2**18)[:, None] >> np.arange(18)) & 1) * 2 - 1
    observed = abs(d.mean())
    full = float(np.mean(np.abs(patterns @ d) / 18 >= observed - 1e-12 * max(1.0, observed)))
    assert 2**18 * 18 > significance._PATTERN_CELLS  # several chunks
    assert permutation_test(a, b, n_resamples=10**20).pvalue == full


@pytest.mark.parametrize(
    ("option", "names"),
    [("--cores", "--cores '': give one or more k-cores"), ("--protocols", "--protocols '': name one or more of")],
)
def test_an_empty_study_list_says_it_is_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, names: str
) -> None:
    """protocols-study --cores '' said '--cores []: give each core once' (and --protocols '' 'name each protocol
    once'): the duplicate's message for an empty list."""
    files = _ratings(tmp_path)
    refused(capsys, ["protocols-study", files["train"], "-f", "csv", option, ""], names=names)


def test_a_grid_past_memory_is_refused_before_it_is_built(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """params = { k = [1..1000], shrink = [0..999], min_k = [1..100] } (10^8 points) was built task by task
    until a MemoryError traceback (or the machine's memory ran out); the tasks are now counted first."""
    grid = f"k = {list(range(1, 1001))}, shrink = {list(range(1000))}, min_k = {list(range(1, 101))}"
    path = tmp_path / "c.toml"
    path.write_text(CONFIG + f"\n[recommenders.item-knn]\nparams = {{ {grid} }}\n")
    out = tmp_path / "results"
    line = refused(capsys, ["run", path, "--out", out], names="c.toml: the grid of 100,000,001 tasks needs")
    assert "[tune]" in line


def test_grid_size_counts_what_expand_builds() -> None:
    from receval.experiment.config import parse_config
    from receval.experiment.grid import expand, grid_size

    text = CONFIG.replace("seeds = [0]", "seeds = [0, 1, 2]") + "\n[recommenders.item-knn]\n"
    text += "params = { k = [5, 10], shrink = [0, 1, 2], similarity = 'cosine' }\n"
    cfg = parse_config(text)
    assert grid_size(cfg) == len(expand(cfg)) == 3 * (1 + 2 * 3)


@pytest.mark.parametrize("rating", ["5e-324", "-1e-46"])
def test_a_rating_that_underflows_to_zero_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rating: str
) -> None:
    """A rating of 5e-324 was counted as a rating of 0 ('rating_counts': {'0': 1}), silently."""
    path = tmp_path / "r.csv"
    path.write_text(f"user,item,rating\nu1,i1,3\nu2,i2,{rating}\n")
    refused(capsys, ["data", "stats", path], names="r.csv, line 3, column rating: rating")
    path.write_text("user,item,rating\nu1,i1,3\nu2,i2,1e-40\n")  # a float32 subnormal stays nonzero: read
    assert '"n_ratings": 2' in stats(capsys, path)


# ------------------------------------------------------------------ interrupted writes
def test_a_failed_publication_leaves_no_new_folder(tmp_path: Path) -> None:
    """Ctrl-C while `split --out new/split` staged its files left new/split behind, empty (the target folders
    were made first); a failure now removes the folders it made when they are empty again."""
    from receval.atomic import publish

    out = tmp_path / "new" / "deep"
    with pytest.raises(KeyboardInterrupt), publish(out) as publication:
        publication.path(out / "fold-1" / "train.tsv").write_text("x")
        raise KeyboardInterrupt
    assert sorted(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "mine.txt").write_text("mine")
    with pytest.raises(RuntimeError), publish(tmp_path / "kept" / "out") as publication:
        publication.path(tmp_path / "kept" / "out" / "a.tsv").write_text("x")
        raise RuntimeError
    assert sorted(p.name for p in (tmp_path / "kept").iterdir()) == ["mine.txt"]
    with publish(out) as publication:  # a success keeps its folders
        publication.path(out / "a.tsv").write_text("x")
    assert (out / "a.tsv").read_text() == "x"
