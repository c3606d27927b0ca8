"""NCF's test files (*.test.rating, *.test.negative) and receval's candidate table: round trips and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receval.data.interactions import Interactions
from receval.data.ncf import NCFTest, read_ncf, write_ncf
from receval.errors import ConfigError, DataError
from receval.evaluation.candidates import draw_candidates
from receval.evaluation.sampled import (
    evaluate_sampled,
    read_candidates,
    read_ncf_candidates,
    write_candidates,
    write_ncf_candidates,
)


def _split():
    """NCF's ids (integers from 0): 4 users, 8 items; each user's last item held out."""
    users = [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 3]
    items = [0, 1, 2, 1, 3, 4, 5, 6, 0, 7, 2]
    stamps = list(range(100, 111))
    ratings = [5, 4, 3, 5, 2, 4, 3, 5, 1, 4, 4]
    data = Interactions.from_ids([str(u) for u in users], [str(i) for i in items], ratings, timestamps=stamps)
    in_test = np.zeros(11, bool)
    in_test[[2, 5, 7, 10]] = True
    return data.subset(~in_test), data.subset(in_test)


RATING = "0\t2\t3\t102\n1\t4\t4\t105\n2\t6\t5\t107\n3\t2\t4\t110\n"
NEGATIVE = "(0,2)\t3\t5\n(1,4)\t0\t7\n(2,6)\t0\t1\n(3,2)\t5\t6\n"


def _files(tmp_path, rating=RATING, negative=NEGATIVE):
    (tmp_path / "toy.test.rating").write_text(rating)
    (tmp_path / "toy.test.negative").write_text(negative)
    return tmp_path / "toy.test.rating", tmp_path / "toy.test.negative"


def test_reads_a_hand_made_pair_of_files(tmp_path):
    train, test = _split()
    cands = read_ncf_candidates(*_files(tmp_path), train, test)
    idx = lambda ids: train.item_index([str(i) for i in ids]).tolist()  # noqa: E731
    assert cands.users.tolist() == train.user_index(["0", "1", "2", "3"]).tolist()
    assert cands.items.tolist() == idx([2, 4, 6, 2])
    assert cands.negatives.tolist() == [idx([3, 5]), idx([0, 7]), idx([0, 1]), idx([5, 6])]
    assert cands.design == {"sampling": "uniform", "n": 2, "exponent": 0.0, "seed": None, "shape": "per-item",
                            "exclude": "train+test"}  # fmt: skip


def test_ncf_files_round_trip(tmp_path):
    train, test = _split()
    cands = read_ncf_candidates(*_files(tmp_path), train, test)
    with pytest.raises(ConfigError, match=r"rating=.*out/x\.test\.rating") as err:  # a folder that does not exist
        write_ncf_candidates(cands, test, tmp_path / "out" / "x.test.rating", tmp_path / "out" / "x.test.negative")
    assert "\n" not in str(err.value) and not (tmp_path / "out").exists()
    (tmp_path / "out").mkdir()
    out = write_ncf_candidates(cands, test, tmp_path / "out" / "x.test.rating", tmp_path / "out" / "x.test.negative")
    assert out[0].read_text() == RATING and out[1].read_text() == NEGATIVE  # byte for byte, ratings and timestamps
    back = read_ncf_candidates(*out, train, test)
    assert np.array_equal(back.negatives, cands.negatives) and np.array_equal(back.items, cands.items)


def test_drawn_candidates_round_trip_through_every_format(tmp_path):
    from receval.data.synthetic import generate
    from receval.split import per_user_holdout

    train, test = per_user_holdout(generate(60, 120, 900, seed=2), seed=2)
    for shape in ("per-item", "per-user"):
        cands = draw_candidates(train, test, 9, shape=shape, seed=4)
        for name in ("c.csv", "c.tsv", "c.parquet"):
            (tmp_path / shape).mkdir(exist_ok=True)
            back = read_candidates(write_candidates(cands, tmp_path / shape / name), train, test)
            assert np.array_equal(back.users, cands.users) and np.array_equal(back.negatives, cands.negatives)
            assert (back.items is None) == (shape == "per-user")
            if name.endswith(".parquet"):  # the design rides along
                assert back.design == cands.design
    cands = draw_candidates(train, test, 9, seed=4)
    paths = write_ncf_candidates(cands, test, tmp_path / "d.test.rating", tmp_path / "d.test.negative")
    back = read_ncf_candidates(*paths, train, test)
    assert np.array_equal(back.negatives, cands.negatives)
    metrics = ["ndcg@10(sampled=9)", "recall@5(sampled=9,correction=bv)"]
    from receval.recommenders import make

    model = make("biases").fit(train)
    assert (
        evaluate_sampled(model, train, test, metrics, candidates=back, fitted=True).summary
        == evaluate_sampled(model, train, test, metrics, candidates=cands, fitted=True).summary
    )


def test_per_user_candidates_are_not_ncf_files(tmp_path):
    train, test = _split()
    from receval.data.synthetic import generate
    from receval.split import per_user_holdout

    train, test = per_user_holdout(generate(30, 80, 400, seed=1), seed=1)
    cands = draw_candidates(train, test, 3, shape="per-user", seed=0)
    with pytest.raises(DataError, match="per-user candidates cannot be written as them"):
        write_ncf_candidates(cands, test, tmp_path / "r", tmp_path / "n")
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("rating", "negative", "where", "message"),
    [
        (
            RATING,
            NEGATIVE.replace("(1,4)\t0\t7", "(1,4)\t0\t3"),
            "toy.test.negative, line 2",
            "negative '3' of user '1' is one of the user's training items",
        ),
        (
            RATING,
            NEGATIVE.replace("(2,6)\t0\t1", "(2,6)\t0\t6"),
            "toy.test.negative, line 3",
            "negative '6' of user '2' is one of the user's test items",
        ),
        (
            RATING,
            NEGATIVE.replace("(3,2)\t5\t6", "(3,2)\t5\t99"),
            "toy.test.negative, line 4",
            "item '99' is not in the data set (8 items)",
        ),
        (RATING.replace("3\t2\t4", "9\t2\t4"), NEGATIVE, "toy.test.rating, line 4", "user '9' is not in the data set"),
        (RATING, NEGATIVE.replace("(1,4)\t0\t7", "(1,4)\t0"), "toy.test.negative, line 2", "has 2 fields, expected 3"),
        (RATING.replace("1\t4\t4\t105", "1\t4\t4"), NEGATIVE, "toy.test.rating, line 2", "has 3 fields, expected 4"),
        (
            RATING,
            NEGATIVE.replace("(1,4)", "(1,5)"),
            "toy.test.negative, line 2",
            "the first field is '(1,5)', expected (1,4) as line 2 of toy.test.rating holds",
        ),
        (
            RATING,
            "\n".join(NEGATIVE.splitlines()[:3]) + "\n",
            "toy.test.negative",
            "the negative file has 3 lines and the rating file 4",
        ),
        (
            RATING.replace("0\t2\t3\t102", "0\t1\t3\t102"),
            NEGATIVE.replace("(0,2)", "(0,1)"),
            "toy.test.negative, line 1",
            "item '1' is not a test item of user '0'",
        ),
    ],
)
def test_bad_files_are_one_line_errors_naming_file_and_line(tmp_path, rating, negative, where, message):
    train, test = _split()
    with pytest.raises(DataError) as err:
        read_ncf_candidates(*_files(tmp_path, rating, negative), train, test)
    text = str(err.value)
    assert where in text and message in text and "\n" not in text


def test_a_bad_candidate_table_names_its_file_and_line(tmp_path):
    train, test = _split()
    path = tmp_path / "c.csv"
    path.write_text("user,item,negative\n0,2,3\n0,2,5\n1,4,0\n1,4,3\n")
    with pytest.raises(DataError) as err:
        read_candidates(path, train, test)
    assert "c.csv, line 4: negative '3' of user '1' is one of the user's training items" in str(err.value)
    path.write_text("user,item,negative\n0,2,3\n0,2,5\n1,4,0\n")
    with pytest.raises(DataError, match=r"c.csv, line 4: candidate row of user '1' has 1 negatives"):
        read_candidates(path, train, test)


def test_data_layer_reader_and_writer(tmp_path):
    data = Interactions.from_ids(["u", "u", "v"], ["x", "y", "z"], [4, 2, 5])
    held = NCFTest(np.array([0, 1]), np.array([0, 2]), np.array([4.0, 5.0]), np.array([1, 2]), np.array([[2], [1]]))
    paths = write_ncf(tmp_path / "a.test.rating", tmp_path / "a.test.negative", held, data)
    assert paths[0].read_text() == "u\tx\t4\t1\nv\tz\t5\t2\n"
    assert paths[1].read_text() == "(u,x)\tz\n(v,z)\ty\n"
    back = read_ncf(*paths, data)
    assert back.users.tolist() == [0, 1] and back.negatives.tolist() == [[2], [1]] and back.lines.tolist() == [1, 2]
    assert back.ratings.tolist() == [4.0, 5.0] and back.timestamps.tolist() == [1, 2]


def test_real_ncf_style_files_of_ml100k(tmp_path, ml100k_dir):
    """ML-100K's u1 split, leave-one-out candidates of 99 negatives, written and read back as NCF files."""
    from receval.data.loaders import load

    data = load(ml100k_dir, format="movielens-100k")
    from receval.split import leave_one_out

    train, test = leave_one_out(data, seed=0)
    cands = draw_candidates(train, test, 99, seed=0)
    paths = write_ncf_candidates(cands, test, tmp_path / "ml.test.rating", tmp_path / "ml.test.negative")
    assert len(paths[1].read_text().splitlines()) == len(cands.users) == test.n_ratings
    assert all(len(line.split("\t")) == 100 for line in paths[1].read_text().splitlines()[:5])
    back = read_ncf_candidates(*paths, train, test)
    assert np.array_equal(back.negatives, cands.negatives)


def test_evaluate_model_ranks_against_ncf_candidates(tmp_path):
    from receval.evaluation import evaluate_model
    from receval.recommenders import make

    train, test = _split()
    cands = read_ncf_candidates(*_files(tmp_path), train, test)
    res = evaluate_model(make("biases"), train, test, ["ndcg@5", "hr@1(sampled=2)"], k=5, candidates=cands)
    alone = evaluate_sampled(make("biases"), train, test, ["hr@1(sampled=2)"], candidates=cands)
    assert res.summary["hr@1(sampled=2)"] == alone.summary["hr@1(sampled=2)"]
    assert res.conventions.sampled["hr@1(sampled=2)"]["seed"] is None  # NCF's draw, not ours
    with pytest.raises(Exception, match=r"asks for sampled=3, but the candidates given have sampled=2"):
        evaluate_model(make("biases"), train, test, ["hr@1(sampled=3)"], candidates=cands)
    with pytest.raises(Exception, match=r"none is asked; add one with their size, e.g. ndcg@10\(sampled=2\)"):
        evaluate_model(make("biases"), train, test, ["ndcg@10"], candidates=cands)


@pytest.mark.parametrize(
    ("rating", "negative", "where", "message"),
    [
        (RATING, NEGATIVE.replace("(1,4)\t0\t7", "(1,4)\t0\t07"), "line 2", "item '07' is not in the data set"),
        (RATING, NEGATIVE.replace("(1,4)\t0\t7", "(1,4)\t0\t7.0"), "line 2", "item '7.0' is not in the data set"),
        (
            RATING,
            NEGATIVE.replace("(1,4)\t0\t7", "(1,4)\t0\t100000000000000000000000"),
            "line 2",
            "item '100000000000000000000000' is not in the data set",  # was '1e+23'
        ),
        (
            RATING,
            NEGATIVE.replace("(1,4)\t0\t7", "(1,4)\t7\t7"),
            "toy.test.negative, line 2",
            "negative '7' is listed twice for user '1'",
        ),
        (
            RATING + "0\t2\t3\t102\n",
            NEGATIVE + "(0,2)\t3\t5\n",
            "toy.test.negative, line 5",
            "the held-out item '2' of user '0' is listed again (first at line 1)",
        ),
        (
            RATING.replace("1\t4\t4\t105", "1\t4\t4\tnoon"),
            NEGATIVE,
            "toy.test.rating, line 2, column timestamp",
            "timestamp 'noon' is neither an integer nor a date",
        ),
    ],
    ids=["leading-zero", "float-text", "huge-id", "repeated-negative", "repeated-line", "timestamp-text"],
)
def test_ids_as_written_no_repeats_and_bad_timestamps(tmp_path, rating, negative, where, message):
    """'07' is not item 7 (as load keeps them apart); a repeated negative or line would be counted twice."""
    train, test = _split()
    with pytest.raises(DataError) as err:
        read_ncf_candidates(*_files(tmp_path, rating, negative), train, test)
    text = str(err.value)
    assert where in text and message in text and "\n" not in text and "Traceback" not in text


def test_a_candidate_table_keeps_ids_as_written(tmp_path):
    train, test = _split()
    path = tmp_path / "c.csv"
    path.write_text("user,item,negative\n0,2,3\n0,2,5\n1,4,0\n1,4,07\n")
    with pytest.raises(DataError, match=r"c\.csv, line 5: negative '07' is not in the data"):
        read_candidates(path, train, test)
    path.write_text("user,item,negative\n0,2,3\n0,2,3\n")
    with pytest.raises(DataError, match=r"c\.csv, line 2: negative '3' is listed twice for user '0'"):
        read_candidates(path, train, test)
    import pandas as pd

    from receval.evaluation.candidates import Candidates

    frame = pd.DataFrame({"user": ["0", "0"], "item": ["2", "2"], "negative": [3.0, float("nan")]})
    with pytest.raises(DataError, match=r"line 1: negative 3\.0 is not in the data") as err:  # a float is no id
        Candidates.from_frame(frame, train)
    frame["negative"] = [float("nan"), 3.0]
    with pytest.raises(DataError, match=r"line 1: negative nan is not in the data") as err:
        Candidates.from_frame(frame, train)
    assert "np.float64" not in str(err.value)


@pytest.mark.parametrize("bad", ["a\tb", "a\nb", "a,b", "(a)", " a", "a ", '"a', "a\x00b"])
def test_write_ncf_refuses_ids_it_cannot_read_back(tmp_path, bad):
    data = Interactions.from_ids(["u", "u", "v"], ["x", bad, "z"], [4, 2, 5])
    bad_index = int(np.flatnonzero(data.item_ids == bad)[0])
    held = NCFTest(np.array([0]), np.array([int(data.item_index(["x"])[0])]), np.array([4.0]), np.array([1]),
                   np.array([[bad_index]]))  # fmt: skip
    with pytest.raises(DataError, match=r"cannot be written in NCF's files") as err:
        write_ncf(tmp_path / "a.test.rating", tmp_path / "a.test.negative", held, data)
    assert "\n" not in str(err.value).replace(repr(bad), "") and not list(tmp_path.iterdir())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(item=st.text(alphabet=st.sampled_from('07aé ,()"\t\n\r\x0b\x1c\x85\u2028\x00#-.e+'), min_size=0, max_size=5))
def test_write_ncf_writes_only_what_reads_back_as_the_same_id(tmp_path_factory, item):
    folder = tmp_path_factory.mktemp("ncf")
    if item in ("x", "z"):
        return
    data = Interactions.from_ids(["u", "u", "v"], ["x", item, "z"], [4, 2, 5])
    own = int(np.flatnonzero(data.item_ids == item)[0])
    held = NCFTest(np.array([0, 1]), np.array([0, own]), np.array([4.0, 2.0]), np.array([1, 2]),
                   np.array([[own], [0]]))  # fmt: skip
    try:
        paths = write_ncf(folder / "a.test.rating", folder / "a.test.negative", held, data)
    except DataError as err:
        assert "cannot be written in NCF's files" in str(err) and not list(folder.iterdir())
        return
    back = read_ncf(*paths, data)
    assert back.items.tolist() == [0, own] and back.negatives.tolist() == [[own], [0]]
