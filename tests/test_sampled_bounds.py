"""Sizes and exponents of sampled evaluation are checked against the data and the machine before any work.

``--repeats 10**12`` was a MemoryError after 25 s, ``--exponent 400`` a ``ValueError: cannot
convert float NaN to integer`` (the popularity weights overflowed), and the same in a
configuration's metric string failed the task at run time (exit 1) instead of the run at
once (exit 2). A metric string's own ``sampled=`` or ``threshold=`` in ``receval sampled``
was silently ignored while its label kept it.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval.cli.app import main
from receval.data.synthetic import generate
from receval.errors import ConfigError, MetricError
from receval.evaluation.sampled import check_sampled_metrics, evaluate_sampled
from receval.recommenders import make
from receval.split import holdout
from receval.stats.sampled import check_exponent, check_sample_memory


@pytest.fixture(scope="module")
def ratings_csv(tmp_path_factory):
    data = generate(n_users=80, n_items=300, n_ratings=4000, n_aspects=0, user_activity_sigma=0.5, seed=3)
    path = tmp_path_factory.mktemp("bounds") / "ratings.csv"
    data.to_frame()[["user", "item", "rating", "timestamp"]].to_csv(path, index=False)
    return path


def one_line_error(capsys):
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    return err


def test_repeats_beyond_memory_refused_before_the_data_is_read(tmp_path, capsys):
    code = main(["sampled", "--data", str(tmp_path / "absent.csv"), "--format", "csv", "--repeats", str(10**12)])
    err = one_line_error(capsys)
    assert code == 2
    assert "1,000,000,000,000 samples" in err and "of memory" in err and "--repeats" in err


def test_popularity_exponent_that_overflows_is_refused_with_the_largest(ratings_csv, tmp_path, capsys):
    out = tmp_path / "report"
    args = ["--algorithms", "popularity,random", "--sampling", "popularity", "--exponent", "400", "--out", str(out)]
    code = main(["sampled", "--data", str(ratings_csv), "--format", "csv", *args])
    err = one_line_error(capsys)
    assert code == 2
    assert "--exponent 400" in err and "overflow" in err and "the largest is --exponent " in err
    assert not out.exists()


def test_exponent_just_below_the_largest_runs(ratings_csv, capsys):
    # the refusal names the largest exponent; one below it draws
    main(["sampled", "--data", str(ratings_csv), "--format", "csv", "--algorithms", "popularity,random",
          "--sampling", "popularity", "--exponent", "400", "--split", "loo"])  # fmt: skip
    train_max = float(one_line_error(capsys).rsplit("--exponent ", 1)[1])
    code = main(["sampled", "--data", str(ratings_csv), "--format", "csv", "--algorithms", "popularity,random",
                 "--sampling", "popularity", "--exponent", str(train_max - 1), "--n", "20", "--repeats", "2",
                 "--json"])  # fmt: skip
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize(
    ("metric", "words"),
    [
        ("ndcg@10(sampled=5)", ["sets sampled=", "--n", "write ndcg@10"]),
        ("ndcg@10(threshold=5)", ["sets threshold=", "whatever its rating", "write ndcg@10"]),
        ("recall@10(correction=bv,sampled=100)", ["correction=", "--corrections"]),
    ],
)
def test_a_metric_strings_own_sample_or_threshold_is_refused(tmp_path, capsys, metric, words):
    code = main(["sampled", "--data", str(tmp_path / "absent.csv"), "--format", "csv", "--metrics", metric])
    err = one_line_error(capsys)
    assert code == 2
    for word in words:
        assert word in err, (word, err)


def test_recbole_shape_is_not_the_studys(tmp_path, capsys):
    code = main(["sampled", "--data", str(tmp_path / "absent.csv"), "--format", "csv", "--shape", "recbole"])
    assert code == 2 and "--shape per-item" in one_line_error(capsys)


def _config(tmp_path, metric, protocol=""):
    text = (f'name = "b"\nmetrics = ["{metric}"]\n[datasets.toy]\n'
            'generate = { n_users = 40, n_items = 120, n_ratings = 1200 }\n[split]\nmethod = "loo-random"\n'
            f"[recommenders.popularity]\n{protocol}")  # fmt: skip
    path = tmp_path / "b.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("metric", "words"),
    [
        ("ndcg@10(sampled=1000000000)", ["sampled=1000000000 negatives cannot be drawn", "data set 'toy'"]),
        ("ndcg@10(sampled=20,sampling=popularity,exponent=400)", ["exponent=400", "overflow", "data set 'toy'"]),
    ],
)
def test_run_refuses_a_sampled_metric_the_data_cannot_take(tmp_path, capsys, metric, words):
    out = tmp_path / "out"
    code = main(["run", str(_config(tmp_path, metric)), "--out", str(out)])
    err = one_line_error(capsys)
    assert code == 2, err
    assert "b.toml, line 2" in err
    for word in words:
        assert word in err, (word, err)
    assert not (out / "parts").exists()


def test_run_protocol_repeats_beyond_memory(tmp_path, capsys):
    protocol = '[protocol]\nname = "sampled"\nn = 20\nrepeats = 1000000000000\n'
    code = main(["run", str(_config(tmp_path, "ndcg@10", protocol)), "--out", str(tmp_path / "out")])
    err = one_line_error(capsys)
    assert code == 2 and "of memory" in err


@pytest.mark.parametrize(
    ("protocol", "line", "words"),
    [
        ('sampling = "popularity"\nexponent = 400\nn = 20\n', 12,
         ["protocol.exponent=400: the popularity weights overflow", "largest is protocol.exponent="]),
        ("n = 118\n", 11, ["protocol.n=118 negatives cannot be drawn", "use protocol.n=105 or fewer"]),
    ],
)  # fmt: skip
def test_run_refuses_the_sampled_protocols_own_design_before_any_task(tmp_path, capsys, protocol, line, words):
    # the protocol's exponent overflowed (and its n failed to draw) in the task: exit 1 after the run had started
    out = tmp_path / "out"
    text = f'[protocol]\nname = "sampled"\nrepeats = 2\n{protocol}'
    code = main(["run", str(_config(tmp_path, "ndcg@10", text)), "--out", str(out)])
    err = one_line_error(capsys)
    assert code == 2, err
    assert f"b.toml, line {line}" in err and "(data set 'toy')" in err
    for word in words:
        assert word in err, (word, err)
    assert not (out / "parts").exists()


def test_run_quotes_a_sampled_metric_as_written(tmp_path, capsys):
    # the message quoted the string as resolved: 'ndcg@10(exponent=400.0,sampled=20,sampling=popularity)'
    metric = "ndcg@10(sampled=20, sampling=popularity, exponent=400)"
    code = main(["run", str(_config(tmp_path, metric)), "--out", str(tmp_path / "out")])
    err = one_line_error(capsys)
    assert code == 2 and f"metric {metric!r}: exponent=400" in err, err


def test_check_sampled_metrics_names_a_mapping_by_its_keys():
    data = generate(40, 120, 1200, seed=0)
    with pytest.raises(MetricError, match=r"^metric 'as typed': sampled=1000000000 negatives"):
        check_sampled_metrics({"as typed": "ndcg@10(sampled=1000000000)"}, data)


def test_library_refuses_before_fitting():
    train, test = holdout(generate(60, 200, 2000, seed=0), test_fraction=0.2, seed=0)
    with pytest.raises(MetricError, match=r"exponent=400: the popularity weights overflow .* the largest is exponent="):
        evaluate_sampled(make("popularity"), train, test, ["ndcg@10(sampled=20,sampling=popularity,exponent=400)"])
    with pytest.raises(MetricError, match=r"sampled=1000000000 negatives cannot be drawn from a catalogue of 200"):
        evaluate_sampled(make("popularity"), train, test, ["ndcg@10(sampled=1000000000)"])


def test_check_sampled_metrics_skips_full_metrics_and_names_the_bound():
    data = generate(40, 120, 1200, seed=0)
    check_sampled_metrics(["ndcg@10", "recall@10(sampled=50)"], data)
    with pytest.raises(MetricError, match=r"at most (\d+) are left"):
        check_sampled_metrics(["recall@10(sampled=119)"], data)


def test_sample_memory_counts_rows_and_repeats():
    check_sample_memory(100, 1000, repeats=20, fix="x")
    with pytest.raises(ConfigError, match=r"20 samples of 1,000,000 negatives for 1,000,000 rows needs .* lower n="):
        check_sample_memory(10**6, 10**6, repeats=20, fix="lower n=", parameters=["n"])


@settings(max_examples=200, deadline=None)
@given(
    counts=st.lists(st.integers(1, 10**7), min_size=1, max_size=50),
    exponent=st.floats(0, 2000, allow_nan=False),
)
def test_an_accepted_exponent_gives_finite_weights(counts, exponent):
    c = np.asarray(counts, dtype=np.float64)
    try:
        check_exponent(exponent, c)
    except ConfigError as exc:
        assert "overflow" in exc.message
        with np.errstate(over="ignore"):
            # refused only near or past the point where the weights' sum is no longer a float
            assert not np.isfinite(np.sum(c**exponent)) or exponent >= np.log(1.7e308 / len(c)) / np.log(c.max())
        return
    with np.errstate(over="raise"):
        assert np.isfinite(np.sum(c**exponent))
