"""Loaders: every upstream layout generated in tmp_path, every bad input, and the real data when present."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from receval.data import FORMATS, Interactions, RatingScale, load, load_user_features, vocab
from receval.data.loaders import ML100K_GENRES, check_format, parse_scale
from receval.errors import DataError

# ------------------------------------------------------------------ upstream layouts


def write_ml100k(folder: Path, *, genre_file: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    # user item rating timestamp; user 2 rates item 1 twice (kept); item 3 listed but never rated
    (folder / "u.data").write_text("1\t1\t5\t874965758\n1\t2\t3\t876893171\n2\t1\t4\t878542960\n2\t1\t2\t878542961\n")
    flags = {1: [3, 4, 5], 2: [1, 2, 16], 3: [0]}  # Toy Story: Animation, Children's, Comedy
    lines = []
    for movie, title in ((1, "Toy Story (1995)"), (2, "GoldenEye (1995)"), (3, "Café Society (1995)")):
        bits = ["1" if g in flags[movie] else "0" for g in range(19)]
        lines.append("|".join([str(movie), title, "01-Jan-1995", "", "http://us.imdb.com/x", *bits]))
    (folder / "u.item").write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    if genre_file:
        (folder / "u.genre").write_text("".join(f"{g}|{j}\n" for j, g in enumerate(ML100K_GENRES)) + "\n")
    (folder / "u.user").write_text("1|24|M|technician|85711\n2|53|F|other|94043\n")
    return folder


def write_ml_dat(folder: Path, *, half: bool, encoding: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    r = ("4.5", "0.5") if half else ("5", "1")
    (folder / "ratings.dat").write_text(
        f"1::1193::{r[0]}::978300760\n1::661::3::978302109\n7::1193::{r[1]}::978301968\n"
    )
    movies = (
        "1193::One Flew Over the Cuckoo's Nest (1975)::Drama\n"
        "661::James and the Giant Peach (1996)::Animation|Children's|Musical\n"
        "3::Amélie (2001)::(no genres listed)\n"
    )
    (folder / "movies.dat").write_bytes(movies.encode(encoding))
    (folder / "users.dat").write_text("1::F::1::10::48067\n7::M::35::1::06810\n")
    return folder


def write_ml_csv(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ratings.csv").write_text(
        "userId,movieId,rating,timestamp\n1,1,4.0,964982703\n1,3,0.5,964981247\n5,1,5.0,847434962\n5,99,3.5,847435000\n"
    )
    (folder / "movies.csv").write_text(
        "movieId,title,genres\n"
        "1,Toy Story (1995),Adventure|Animation|Children|Comedy|Fantasy\n"
        '3,"Fugitive, The (1993)",Thriller\n'
        "99,Nothing (2019),(no genres listed)\n"
        "100,Unrated (2020),Drama\n"
    )
    return folder


CM_ROWS = [(701, 74476228, 3, 0), (701, 68559485, 1, 0), (701, 88304149, 3, 1), (12, 74476228, 4, 1)]


def write_cm100k_release(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "ratings.txt").write_text("".join("\t".join(map(str, r)) + "\n" for r in CM_ROWS))
    (folder / "items.txt").write_text("Item\tUrl\tTitle\tArtist\n74476228\thttp://x/a.mp3\tSong\tArtist\n")
    return folder


def write_cm100k_authors(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    relabel = {701: 32070389, 12: 35788601}
    text = "".join(f"{relabel[u]}\t{i}\t{r}\t{k}\r\n" for u, i, r, k in CM_ROWS)
    (folder / "data.txt").write_bytes(text.encode())
    (folder / "items.txt").write_text("74476228\n68559485\n88304149\n")
    (folder / "users.txt").write_text("32070389\n35788601\n")
    return folder


def genres_of(data: Interactions, item_id: object) -> set[str]:
    row = data.aspects[int(data.item_index([item_id])[0])]
    return {str(data.aspect_names[j]) for j in row.indices}


# ------------------------------------------------------------------------ formats


def test_format_names_are_the_agreed_ones():
    assert list(FORMATS) == [
        "csv", "tsv", "parquet", "trec", "ranx-json", "recbole", "movielens-100k", "movielens-1m", "movielens-10m",
        "movielens-20m", "movielens-25m", "movielens-latest", "cm100k", "yelp",
    ]  # fmt: skip
    assert check_format(" MovieLens_1M ") == "movielens-1m"


@pytest.mark.parametrize("genre_file", [True, False])
def test_movielens_100k(tmp_path, genre_file):
    folder = write_ml100k(tmp_path / "ml-100k", genre_file=genre_file)
    data = load(folder, "movielens-100k")
    assert (data.n_users, data.n_items, data.n_ratings) == (2, 2, 4)  # item 3 is never rated
    assert data.user_ids.tolist() == [1, 2] and data.item_ids.tolist() == [1, 2]
    assert data.scale == RatingScale(1, 5, 1)
    assert data.n_duplicates == 1  # the repeated (2, 1) rating is kept
    assert data.timestamps.tolist()[:2] == [874965758, 876893171]
    assert genres_of(data, 1) == {"Animation", "Children's", "Comedy"}
    assert genres_of(data, 2) == {"Action", "Adventure", "Thriller"}
    assert data.name == "movielens-100k"
    # the ratings file itself and the folder above are accepted too
    assert load(folder / "u.data", "movielens-100k").n_ratings == 4
    assert load(tmp_path, "movielens-100k").n_ratings == 4


def test_movielens_100k_user_features(tmp_path):
    folder = write_ml100k(tmp_path / "ml-100k")
    users = load_user_features(folder, "movielens-100k")
    assert users.columns.tolist() == ["user", "age", "gender", "occupation", "zip"]
    assert users["user"].tolist() == [1, 2] and users["age"].tolist() == [24, 53]
    assert users["occupation"].tolist() == ["technician", "other"]


def test_movielens_1m(tmp_path):
    folder = write_ml_dat(tmp_path / "ml-1m", half=False, encoding="latin-1")
    data = load(folder, "movielens-1m")
    assert (data.n_users, data.n_items, data.n_ratings) == (2, 2, 3)
    assert data.scale == RatingScale(1, 5, 1)
    assert data.ratings.tolist() == [5, 3, 1]
    assert genres_of(data, 661) == {"Animation", "Children's", "Musical"}
    assert genres_of(data, 1193) == {"Drama"}
    users = load_user_features(folder, "movielens-1m")
    assert users.to_dict("list") == {
        "user": [1, 7], "age": [1, 35], "gender": ["F", "M"], "occupation": [10, 1], "zip": ["48067", "06810"],
    }  # fmt: skip


def test_movielens_10m_half_stars_and_nested_folder(tmp_path):
    write_ml_dat(tmp_path / "ml-10M100K", half=True, encoding="utf-8")
    data = load(tmp_path, "movielens-10m")  # the folder above ml-10M100K
    assert data.scale == RatingScale(0.5, 5, 0.5)
    assert sorted(data.ratings.tolist()) == [0.5, 3.0, 4.5]
    # 1M declares whole stars: the same half-star file is rejected there, naming the line
    with pytest.raises(DataError, match=r"ratings\.dat, line 1, column rating: rating 4\.5 is outside"):
        load(tmp_path / "ml-10M100K", "movielens-1m")


@pytest.mark.parametrize("fmt", ["movielens-20m", "movielens-25m", "movielens-latest"])
def test_movielens_csv_releases(tmp_path, fmt):
    folder = write_ml_csv(tmp_path / "ml")
    data = load(folder, fmt)
    assert (data.n_users, data.n_items, data.n_ratings) == (2, 3, 4)
    assert data.item_ids.tolist() == [1, 3, 99]  # movie 100 is listed, never rated
    assert data.scale == RatingScale(0.5, 5, 0.5)
    assert genres_of(data, 3) == {"Thriller"}  # quoted title with a comma
    assert genres_of(data, 99) == set()  # (no genres listed)
    assert "(no genres listed)" not in data.aspect_names
    with pytest.raises(DataError, match="ships no user features"):
        load_user_features(folder, fmt)


@pytest.mark.parametrize("layout", ["release", "authors"])
def test_cm100k_layouts(tmp_path, layout):
    folder = (write_cm100k_release if layout == "release" else write_cm100k_authors)(tmp_path / "cm")
    data = load(folder, "cm100k")
    assert (data.n_users, data.n_items, data.n_ratings) == (2, 3, 4)
    assert data.scale == RatingScale(1, 4, 1)
    assert data.ratings.tolist() == [3, 1, 3, 4]
    assert data.extra["familiar"].dtype == bool
    assert data.extra["familiar"].tolist() == [False, False, True, True]
    familiar = load(folder, "cm100k", familiar_only=True)
    assert familiar.n_ratings == 2 and familiar.n_items == 2 and familiar.n_users == 2
    assert familiar.item_ids.tolist() == [74476228, 88304149]
    assert familiar.extra["familiar"].all()


def test_cm100k_prefers_authors_copy_but_finds_release_subfolder(tmp_path):
    write_cm100k_release(tmp_path / "cm" / "release")
    assert load(tmp_path / "cm", "cm100k").user_ids.tolist() == [12, 701]
    write_cm100k_authors(tmp_path / "cm")
    assert load(tmp_path / "cm", "cm100k").user_ids.tolist() == [32070389, 35788601]


def test_generic_csv_with_string_ids_and_real_ratings(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("user,item,rating,timestamp\nann,The Wire,3.2741,10\nbob,The Wire,1.5,11\nann,Lost,4.9,12\n")
    data = load(path, "csv")
    assert data.user_ids.tolist() == ["ann", "bob"]
    assert data.item_ids.tolist() == ["Lost", "The Wire"]
    assert data.ratings.tolist() == pytest.approx([3.2741, 1.5, 4.9])
    assert data.scale.step is None and data.scale.low == 1.5
    assert data.timestamps.tolist() == [10, 11, 12]
    declared = load(path, "csv", scale="0..5")
    assert declared.scale == RatingScale(0, 5)


def test_generic_column_mapping_separator_and_extra(tmp_path):
    path = tmp_path / "r.txt"
    path.write_text("uid;song;stars;when;known\n007;a;1;2020-01-01;1\n7;b;4;2020-01-02 12:00;0\n")
    data = load(path, "csv", user="uid", item="song", rating="stars", timestamp="when", sep=";", extra=["known"])
    assert data.user_ids.tolist() == ["007", "7"]  # ids as written: 007 is not 7
    assert data.timestamps.tolist() == [1577836800, 1577966400]
    assert data.extra["known"].tolist() == [1, 0]
    as_text = load(path, "csv", user="uid", item="song", rating="stars", sep=";", ids_as_str=True)
    assert as_text.user_ids.tolist() == ["007", "7"]
    assert as_text.timestamps is None


def test_generic_familiar_column(tmp_path):
    path = tmp_path / "r.tsv"
    path.write_text("user\titem\trating\tfamiliar\nu\ta\t1\ttrue\nu\tb\t2\tfalse\nv\ta\t3\t1\n")
    data = load(path, "tsv", extra=["familiar"])
    assert data.extra["familiar"].tolist() == [True, False, True]
    assert load(path, "tsv", extra=["familiar"], familiar_only=True).n_ratings == 2


def test_parquet(tmp_path):
    frame = pd.DataFrame({"u": ["x", "y", "y"], "i": [3, 1, 3], "r": [1.0, 2.5, 5.0], "timestamp": [1, 2, 3]})
    frame.to_parquet(tmp_path / "r.parquet")
    data = load(tmp_path / "r.parquet", "parquet", user="u", item="i", rating="r")
    assert data.user_ids.tolist() == ["x", "y"] and data.item_ids.tolist() == [1, 3]
    assert data.timestamps.tolist() == [1, 2, 3]
    assert data.scale == RatingScale(1, 5, 0.5)
    with pytest.raises(DataError, match=r"r\.parquet, column r: row 3: rating 5 is outside"):
        load(tmp_path / "r.parquet", "parquet", user="u", item="i", rating="r", scale="1..4")
    with pytest.raises(DataError, match=r"column user: missing required column 'user': .* it has \['u', "):
        load(tmp_path / "r.parquet", "parquet")


def test_duplicates_are_kept(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("user,item,rating\na,x,1\na,x,5\na,x,3\n")
    data = load(path, "csv")
    assert data.n_ratings == 3 and data.n_duplicates == 2


def test_parse_scale():
    assert parse_scale("1..5") == RatingScale(1, 5)
    assert parse_scale("1..5:1") == RatingScale(1, 5, 1)
    assert parse_scale("0.5,5,0.5") == RatingScale(0.5, 5, 0.5)
    assert parse_scale([1, 4, 1]) == RatingScale(1, 4, 1)
    with pytest.raises(DataError, match=r"LOW\.\.HIGH"):
        parse_scale("one to five")


# ---------------------------------------------------------------------- bad input

HEADER = "user,item,rating\n"
BAD_CSV = [
    # (content, format options, line, column, message fragment)
    (HEADER + "a,x,4\nb,x\n", {}, 3, None, "has 2 fields, expected 3"),
    (HEADER + "a,x,4\n\nb,x,4,9\n", {}, 4, None, "has 4 fields, expected 3"),
    (HEADER + "a,x,4\nb,x,lots\n", {}, 3, "rating", "rating 'lots' is not a number"),
    (HEADER + "a,x,4\nb,x,7\n", {"scale": "1..5"}, 3, "rating", "rating 7 is outside the declared scale 1..5"),
    (HEADER + "a,x,4\nb,x,4.5\n", {"scale": (1, 5, 1)}, 3, "rating", "outside the declared scale 1..5 step 1"),
    (HEADER + "a,x,4\n,x,4\n", {}, 3, "user", "empty user id"),
    ("", {}, 1, None, "the file is empty"),
    (HEADER, {}, 2, None, "has a header but no rows"),
    ("user,item,score\na,x,4\n", {}, 1, "rating", "missing required column 'rating'"),
    ("user,item,rating,timestamp\na,x,4,1\nb,x,4,soon\n", {}, 3, "timestamp", "neither an integer nor a date"),
    ("user,item,rating,familiar\na,x,4,1\nb,x,4,2\n", {"extra": ["familiar"]}, 3, "familiar", "flag '2'"),
]


@pytest.mark.parametrize(("content", "options", "line", "column", "fragment"), BAD_CSV)
def test_bad_csv_names_file_line_and_problem(tmp_path, content, options, line, column, fragment):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(DataError) as info:
        load(path, "csv", **options)
    err = info.value
    assert err.path == str(path) and err.line == line and err.column == column
    assert fragment in str(err)
    assert str(err).startswith(f"{path}, line {line}")


BAD_FIXED = [
    ("movielens-100k", "u.data", "1\t1\t5\t1\n1\t2\t6\t2\n", 2, "rating", "rating 6 is outside the declared scale"),
    ("movielens-100k", "u.data", "1\t1\t5\t1\n1\t2\t3\n", 2, None, "has 3 fields, expected 4"),
    ("movielens-100k", "u.data", "1\t1\t5\t1\n1\tx\t3\t2\n", 2, "item", "item 'x' is not an integer id"),
    ("movielens-1m", "ratings.dat", "1::1::5::1\n1::2::3::\n", 2, "timestamp", "timestamp ''"),
    ("movielens-1m", "ratings.dat", "1::1::5::1\n\n1:2::3::4\n", 3, None, "has 3 fields, expected 4"),
    ("movielens-10m", "ratings.dat", "1::1::5::1\n1::2::5.5::1\n", 2, "rating", "outside the declared scale 0.5..5"),
    ("movielens-latest", "ratings.csv", "userId,movieId,rating,timestamp\n1,1,4,1\n1,2,0,1\n", 3, "rating", "rating 0"),
    ("movielens-25m", "ratings.csv", "userId,movieId,rating\n1,1,4\n", 1, "timestamp", "header is userId,movieId"),
    ("cm100k", "ratings.txt", "1\t2\t4\t0\n1\t3\t5\t0\n", 2, "rating", "outside the declared scale 1..4"),
    ("cm100k", "ratings.txt", "1\t2\t4\t0\n1\t3\t2\tyes\n", 2, "known", "flag 'yes' is not 0 or 1"),
    ("cm100k", "data.txt", "1\t2\t4\t0\r\n1\t3\t2\r\n", 2, None, "has 3 fields, expected 4"),
]


@pytest.mark.parametrize(("fmt", "name", "content", "line", "column", "fragment"), BAD_FIXED)
def test_bad_fixed_layouts_name_file_line_and_problem(tmp_path, fmt, name, content, line, column, fragment):
    (tmp_path / name).write_text(content)
    with pytest.raises(DataError) as info:
        load(tmp_path, fmt)
    err = info.value
    assert err.path == str(tmp_path / name) and err.line == line and err.column == column
    assert fragment in str(err)


def test_bad_side_files_name_their_line(tmp_path):
    folder = write_ml100k(tmp_path / "ml")
    text = (folder / "u.item").read_bytes().decode("latin-1").splitlines()
    text[1] = text[1].rsplit("|", 1)[0]  # drop one genre flag on line 2
    (folder / "u.item").write_bytes(("\n".join(text) + "\n").encode("latin-1"))
    with pytest.raises(DataError, match=r"u\.item, line 2: has 23 fields, expected 24"):
        load(folder, "movielens-100k")
    csv_folder = write_ml_csv(tmp_path / "mlcsv")
    with open(csv_folder / "movies.csv", "a") as fh:
        fh.write("abc,Title,Drama\n")
    with pytest.raises(DataError, match=r"movies\.csv, line 6: movieId 'abc' is not an integer"):
        load(csv_folder, "movielens-latest")


def test_unknown_format_missing_paths_and_misplaced_options(tmp_path):
    with pytest.raises(DataError, match=r"unknown format 'excel'; use one of: csv, tsv, parquet, .*cm100k"):
        load(tmp_path, "excel")
    with pytest.raises(DataError, match=r"no u\.data in this folder"):
        load(tmp_path, "movielens-100k")
    with pytest.raises(DataError, match="no such file or folder"):
        load(tmp_path / "nope", "movielens-1m")
    with pytest.raises(DataError, match="expects the path of one file"):
        load(tmp_path, "csv")
    with pytest.raises(DataError, match=r"no data\.txt"):
        load(tmp_path, "cm100k")
    folder = write_ml100k(tmp_path / "ml")
    with pytest.raises(DataError, match=r"options \['user'\] apply only to the csv"):
        load(folder, "movielens-100k", user="u")
    with pytest.raises(DataError, match="familiar_only needs a 'familiar' flag"):
        load(folder, "movielens-100k", familiar_only=True)


ids = st.text(alphabet="abcxyz", min_size=1, max_size=3)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(st.tuples(ids, ids, st.integers(1, 5)), min_size=1, max_size=30),
    bad_at=st.integers(0, 29),
    blanks=st.lists(st.integers(0, 30), max_size=3),
)
def test_first_bad_line_is_the_physical_line(tmp_path, rows, bad_at, blanks):
    """Whatever the position of the bad value and blank lines, the line is the one an editor shows."""
    bad_at %= len(rows)
    lines = ["user,item,rating"] + [f"{u},{i},{r}" for u, i, r in rows]
    lines[bad_at + 1] = lines[bad_at + 1].rsplit(",", 1)[0] + ",9"
    target = bad_at + 1
    for b in sorted(set(blanks), reverse=True):
        pos = 1 + b % len(rows)
        lines.insert(pos, "")
        if pos <= target:
            target += 1
    path = tmp_path / "p.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError) as info:
        load(path, "csv", scale="1..5:1")
    assert info.value.line == target + 1
    assert lines[info.value.line - 1].endswith(",9")


@pytest.mark.parametrize("header", [True, False])
def test_line_lookup_with_blank_lines_and_crlf(tmp_path, header):
    """A row's line counts blank lines and CRLF line ends as an editor does."""
    rows = [f"{u}\t{i}\t{1 + (u * i) % 5}\t{u + i}" for u in range(1, 6) for i in range(1, 8)]
    bad = 23
    rows[bad] = rows[bad].replace("\t", "\t", 1).rsplit("\t", 2)[0] + "\t8\t1"
    lines = (["user\titem\trating\ttimestamp"] if header else []) + rows
    lines.insert(5, "")
    lines.insert(30, "\r")
    text = "\r\n".join(lines)  # CRLF, and no newline after the last line
    path = tmp_path / "r.tsv"
    path.write_text(text, newline="")
    if header:
        with pytest.raises(DataError) as info:
            load(path, "tsv", scale="1..5:1")
    else:
        (tmp_path / "u.data").write_text(text, newline="")
        with pytest.raises(DataError) as info:
            load(tmp_path, "movielens-100k")
    physical = text.split("\r\n")
    assert physical[info.value.line - 1] == rows[bad]
    assert info.value.column == "rating" and "rating 8 is outside" in str(info.value)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.integers(0, 10**6), ids, st.integers(1, 10).map(lambda r: r / 2)), min_size=1))
def test_csv_load_matches_from_frame(tmp_path, rows):
    """The fast path (lookup-table codes for integer ids) equals Interactions.from_frame."""
    frame = pd.DataFrame(rows, columns=["user", "item", "rating"])
    path = tmp_path / "h.csv"
    frame.to_csv(path, index=False)
    got = load(path, "csv")
    ref = Interactions.from_frame(frame)
    for attr in ("users", "items", "ratings", "user_ids", "item_ids"):
        assert np.array_equal(getattr(got, attr), getattr(ref, attr)), attr
    assert got.scale == ref.scale


@pytest.mark.parametrize("compiled_from", [0, 1 << 20])
def test_id_codes_agree_with_pandas_factorize(monkeypatch, compiled_from):
    """Both lookup-table paths (numpy, compiled) and the hashing path give factorize's codes."""
    monkeypatch.setattr(vocab, "_COMPILED_FROM", compiled_from)
    rng = np.random.default_rng(3)
    cases = [
        rng.integers(-50, 5000, 3000),  # compact range: lookup table
        np.array([10**12, 5, 10**12, -3]),  # wide range: pandas
        np.array(["b", "a", "b", "c"], dtype=object),
        np.array([7]),
    ]
    for ids in cases:
        codes, uniques = vocab.encode(pd.Series(ids))
        ref_codes, ref_uniques = pd.factorize(ids, sort=True)
        assert codes.dtype == np.int32
        assert np.array_equal(codes, ref_codes) and np.array_equal(uniques, np.asarray(ref_uniques))


# ---------------------------------------------------------------- real data sets


def test_real_ml100k(ml100k_dir):
    data = load(ml100k_dir, "movielens-100k")
    assert (data.n_users, data.n_items, data.n_ratings) == (943, 1682, 100_000)
    assert len(data.aspect_names) == 19 and set(data.aspect_names) == set(ML100K_GENRES)
    assert data.scale == RatingScale(1, 5, 1) and data.n_duplicates == 0
    toy_story = genres_of(data, 1)
    assert toy_story == {"Animation", "Children's", "Comedy"}
    users = load_user_features(ml100k_dir, "movielens-100k")
    assert len(users) == 943 and set(users["gender"]) == {"M", "F"}


def test_real_ml_latest_small(ml_latest_small_dir):
    data = load(ml_latest_small_dir, "movielens-latest")
    assert (data.n_users, data.n_items, data.n_ratings) == (610, 9724, 100_836)
    assert data.scale == RatingScale(0.5, 5, 0.5)
    assert "(no genres listed)" not in data.aspect_names


def test_real_cm100k_both_layouts(cm100k_dir):
    authors = load(cm100k_dir, "cm100k")
    release = load(cm100k_dir / "release", "cm100k")
    for data in (authors, release):
        assert (data.n_users, data.n_items, data.n_ratings) == (1054, 1084, 103_584)
        assert int(data.extra["familiar"].sum()) == 11_594
    # same rows in the same order, user ids relabelled
    assert np.array_equal(authors.ratings, release.ratings)
    assert np.array_equal(authors.extra["familiar"], release.extra["familiar"])
    assert np.array_equal(authors.item_ids[authors.items], release.item_ids[release.items])
    familiar = load(cm100k_dir, "cm100k", familiar_only=True)
    assert familiar.n_ratings == 11_594 and familiar.extra["familiar"].all()


def test_real_error_message_counts_lines_like_an_editor(ml100k_dir, tmp_path):
    lines = (ml100k_dir / "u.data").read_text().splitlines()
    lines[54_321] = re.sub(r"\t\d\t", "\t9\t", lines[54_321], count=1)
    (tmp_path / "u.data").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError, match=r"u\.data, line 54322, column rating: rating 9 is outside"):
        load(tmp_path, "movielens-100k")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="0123456789-+ \n\u0663a", max_size=21), min_size=1, max_size=12))
def test_arrow_parses_integer_ids_as_the_python_loop_does(ids):
    import pyarrow as pa

    from receval.data.loaders import _CANONICAL_INT, _canonical_integers

    got = _canonical_integers(pa.array(ids))
    if all(_CANONICAL_INT.match(v) for v in ids):
        assert got is not None and got.tolist() == [int(v) for v in ids]
    else:
        assert got is None


def test_many_integer_ids_read_by_arrow_are_the_same_ids(tmp_path, monkeypatch):
    from receval.data import loaders

    rows = "".join(f"{u},{(u * 7919) % 5003 - 2000},{u % 5 + 1}\n" for u in range(3000))
    (tmp_path / "r.csv").write_text("user,item,rating\n" + rows)
    by_python = load(tmp_path / "r.csv", format="csv")
    monkeypatch.setattr(loaders, "_PARSED_BY_ARROW", 1)
    by_arrow = load(tmp_path / "r.csv", format="csv")
    assert by_arrow.item_ids.tolist() == by_python.item_ids.tolist() and by_arrow.item_ids.dtype == np.int64
    assert np.array_equal(by_arrow.items, by_python.items) and np.array_equal(by_arrow.users, by_python.users)


def test_genres_false_leaves_the_side_file_unread_and_the_ratings_as_they_are(tmp_path):
    folder = write_ml100k(tmp_path / "ml")
    full, bare = load(folder, "movielens-100k"), load(folder, "movielens-100k", genres=False)
    assert full.aspects is not None and bare.aspects is None
    assert bare.user_ids.tolist() == full.user_ids.tolist() and bare.item_ids.tolist() == full.item_ids.tolist()
    assert np.array_equal(bare.users, full.users) and np.array_equal(bare.ratings, full.ratings)
    (folder / "u.item").write_text("not|a genre line\n")  # never read without genres
    assert len(load(folder, "movielens-100k", genres=False)) == len(full)
    with pytest.raises(DataError, match=r"u\.item, line 1"):
        load(folder, "movielens-100k")
