"""``format="yelp"``: the Yelp Open Dataset's review and business JSON lines, written here in Yelp's layout."""

from __future__ import annotations

import calendar
import gzip
import json
import re
from pathlib import Path

import pytest

from receval.cli import main
from receval.data import load
from receval.data.formats import YELP_BUSINESSES, YELP_REVIEWS, check_format, detect
from receval.data.interactions import RatingScale
from receval.data.registry import fetch
from receval.data.tables import read_table
from receval.errors import DataError

REVIEWS = [
    {"review_id": "r1", "user_id": "007", "business_id": "-bizA", "stars": 4.0, "useful": 1, "funny": 0,
     "cool": 0, "text": "Good \"pizza\",\nthin crust", "date": "2016-03-09 00:44:42"},
    {"review_id": "r2", "user_id": "7", "business_id": "-bizA", "stars": 2, "text": "meh",
     "date": "2017-01-01 10:00:00"},
    {"review_id": "r3", "user_id": "007", "business_id": "biz_B", "stars": 5, "text": "",
     "date": "2018-07-07 22:09:11"},
    {"review_id": "r4", "user_id": "007", "business_id": "-bizA", "stars": 3, "text": "again",
     "date": "2019-07-07 22:09:11"},
]  # fmt: skip
BUSINESSES = [
    {"business_id": "-bizA", "name": "A", "city": "Tucson", "categories": "Restaurants, Pizza, Italian", "stars": 4.5,
     "attributes": {"WiFi": "u'free'"}, "hours": None},
    {"business_id": "biz_B", "name": "B", "categories": None},
    {"business_id": "bizC", "name": "C", "categories": "Shopping"},
]  # fmt: skip


def _write(folder: Path, reviews=REVIEWS, businesses=BUSINESSES, blank_line_after: int | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in reviews]
    if blank_line_after is not None:
        lines.insert(blank_line_after, "")
    (folder / YELP_REVIEWS).write_text("\n".join(lines) + "\n")
    (folder / YELP_BUSINESSES).write_text("".join(json.dumps(b) + "\n" for b in businesses))
    return folder


def _seconds(text: str) -> int:
    """Unix seconds of Yelp's "YYYY-MM-DD hh:mm:ss" (UTC), by the calendar module."""
    fields = [int(x) for x in text.replace("-", " ").replace(":", " ").split()]
    return calendar.timegm((*fields, 0, 0, 0))


def test_reviews_as_ratings_ids_round_trip(tmp_path):
    data = load(_write(tmp_path / "yelp"), "yelp")
    assert check_format("YELP") == "yelp" and data.name == "yelp"
    assert data.user_ids.tolist() == ["007", "7"]  # text as written: 007 and 7 are two users
    assert data.item_ids.tolist() == ["-bizA", "biz_B"]  # bizC is never reviewed: outside the id space
    rows = [
        (data.user_ids[u], data.item_ids[i], float(r))
        for u, i, r in zip(data.users, data.items, data.ratings, strict=True)
    ]
    assert rows == [(r["user_id"], r["business_id"], float(r["stars"])) for r in REVIEWS]
    assert data.timestamps.tolist() == [_seconds(r["date"]) for r in REVIEWS]
    assert data.scale == RatingScale(1, 5, 1)
    assert data.n_duplicates == 1  # 007 reviewed -bizA twice: both kept (the magic barrier needs them)
    frame = data.to_frame()
    assert frame["user"].tolist() == [r["user_id"] for r in REVIEWS]


def test_business_categories_are_item_aspects(tmp_path):
    data = load(_write(tmp_path / "yelp"), "yelp")
    matrix = data.aspects.tocsr()
    aspects = {data.item_ids[i]: {str(data.aspect_names[j]) for j in matrix[i].indices} for i in range(data.n_items)}
    assert aspects == {"-bizA": {"Restaurants", "Pizza", "Italian"}, "biz_B": set()}
    assert "Shopping" not in data.aspect_names.tolist()  # only the rated businesses' categories


def test_integer_ids_keep_their_categories(tmp_path):
    reviews = [{**r, "business_id": b} for r, b in zip(REVIEWS, ["10", "10", "11", "10"], strict=True)]
    businesses = [{**BUSINESSES[0], "business_id": "10"}, {**BUSINESSES[1], "business_id": "11", "categories": "Bars"}]
    data = load(_write(tmp_path / "yelp", reviews=reviews, businesses=businesses), "yelp", ids_as_str=False)
    assert data.item_ids.tolist() == [10, 11]
    matrix = data.aspects.tocsr()
    aspects = {int(data.item_ids[i]): {str(data.aspect_names[j]) for j in matrix[i].indices} for i in range(2)}
    assert aspects == {10: {"Restaurants", "Pizza", "Italian"}, 11: {"Bars"}}


def test_the_review_file_itself_and_no_categories_at_all(tmp_path):
    folder = _write(tmp_path / "yelp", businesses=[{**b, "categories": None} for b in BUSINESSES])
    data = load(folder / YELP_REVIEWS, "yelp")
    assert data.n_ratings == len(REVIEWS) and data.aspects is None


def _error(folder: Path) -> str:
    with pytest.raises(DataError) as err:
        load(folder, "yelp")
    message = str(err.value)
    assert "\n" not in message
    return message


def test_malformed_line_is_named(tmp_path):
    folder = _write(tmp_path / "yelp", blank_line_after=1)  # the blank line 2 is not a record
    path = folder / YELP_REVIEWS
    lines = path.read_text().splitlines()
    lines[3] = lines[3][:-1]  # line 4 (the third review) loses its closing brace
    path.write_text("\n".join(lines) + "\n")
    assert _error(folder).startswith(f"{path}, line 4: not a JSON object")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"stars": "five"}, "line 2, column stars: stars 'five' is not a number"),
        ({"stars": 6}, "line 2, column stars: rating 6 is outside the declared scale 1..5"),
        ({"user_id": None}, "line 2, column user_id: user_id is missing"),
        ({"date": "yesterday"}, "line 2, column date: timestamp 'yesterday' is neither an integer nor a date"),
        ({"business_id": "nowhere"}, "line 2, column business_id: business_id 'nowhere' is not in"),
    ],
)
def test_bad_review_is_named_by_file_line_and_field(tmp_path, change, expected):
    reviews = [REVIEWS[0], {**REVIEWS[1], **change}, *REVIEWS[2:]]
    folder = _write(tmp_path / "yelp", reviews=reviews)
    message = _error(folder)
    assert message.startswith(str(folder / YELP_REVIEWS)) and expected in message


def test_unknown_business_says_how_to_fix(tmp_path):
    folder = _write(tmp_path / "yelp", businesses=BUSINESSES[:1])
    message = _error(folder)
    assert f"{YELP_REVIEWS}, line 3, column business_id: business_id 'biz_B' is not in {YELP_BUSINESSES}" in message
    assert "same Yelp release" in message


def test_missing_files_and_repeated_business(tmp_path):
    folder = _write(tmp_path / "yelp")
    (folder / YELP_BUSINESSES).unlink()
    assert f"{YELP_BUSINESSES} is missing" in _error(folder)
    assert f"no {YELP_REVIEWS} in this folder" in _error(tmp_path)
    assert "no such file or folder" in _error(tmp_path / "absent")
    twice = _write(tmp_path / "twice", businesses=[*BUSINESSES, BUSINESSES[0]])
    assert _error(twice).startswith(f"{twice / YELP_BUSINESSES}, line 4: business_id '-bizA' is listed twice")
    with pytest.raises(DataError, match=re.escape("by hand: from https://www.yelp.com/dataset")):
        fetch("yelp", tmp_path / "cache")


def test_commands_read_it(tmp_path, capsys):
    folder = _write(tmp_path / "yelp")
    assert main(["data", "stats", str(folder), "--format", "yelp", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert (stats["n_users"], stats["n_ratings"]) == (2, 4)
    # Eq. 8 on Yelp's own repeat: 007 rated -bizA 4 then 3 (mean 3.5): 0.25 + 0.25
    assert main(["coherence", "--data", str(folder), "--format", "yelp", "--gamma", "barrier", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["users"] == {"007": 0.5}
    assert main(["data", "stats", str(tmp_path / "absent"), "--format", "yelp"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file or folder" in err


def _rows(table) -> list[tuple[str, str, float, int]]:
    columns = [table[c].to_pylist() for c in ("user", "item", "rating", "timestamp")]
    return list(zip(*columns, strict=True))


def test_the_table_reader_reads_what_load_reads(tmp_path):
    folder = _write(tmp_path / "yelp")
    expected = [(r["user_id"], r["business_id"], float(r["stars"]), _seconds(r["date"])) for r in REVIEWS]
    for path in (folder, folder / YELP_REVIEWS):
        for kind in ("truth", "train"):
            assert _rows(read_table(path, kind, format="yelp", arrow=True)) == expected
        data = load(path, "yelp")
        rows = zip(data.user_ids[data.users], data.item_ids[data.items], data.ratings, data.timestamps, strict=True)
        assert [(u, i, float(r), int(t)) for u, i, r, t in rows] == expected


def test_the_review_file_is_told_by_its_name(tmp_path):
    folder = _write(tmp_path / "yelp")
    packed = folder / f"{YELP_REVIEWS}.gz"
    packed.write_bytes(gzip.compress((folder / YELP_REVIEWS).read_bytes()))
    for path in (folder / YELP_REVIEWS, packed):
        assert detect(path) == ("yelp", None)
        assert load(path).to_frame().equals(load(folder, "yelp").to_frame())
        assert _rows(read_table(path, "truth", arrow=True)) == _rows(read_table(folder, "truth", format="yelp",
                                                                                arrow=True))  # fmt: skip


def test_evaluate_reads_the_review_file_as_truth(tmp_path, capsys):
    also = {**REVIEWS[2], "review_id": "r5", "user_id": "7"}  # 7 gives biz_B 5 stars too
    folder = _write(tmp_path / "yelp", reviews=[*REVIEWS[:3], also])  # one rating a pair, as a truth table holds
    recs = tmp_path / "recs.tsv"
    recs.write_text("user\titem\tscore\n007\tbiz_B\t0.9\n7\t-bizA\t0.8\n")
    for path in (folder, folder / YELP_REVIEWS):
        assert main(["evaluate", "--truth", str(path), "--truth-format", "yelp", "--recs", str(recs), "--metrics",
                     "precision@1", "--threshold", "4", "--json"]) == 0  # fmt: skip
        # 007 ranks biz_B (5 stars) first: relevant; 7 ranks -bizA (2 stars) first: not (007 and 7 are two users)
        assert json.loads(capsys.readouterr().out)["precision@1"] == pytest.approx(0.5)


def test_every_reader_names_a_bad_line_alike(tmp_path, capsys):
    reviews = [REVIEWS[0], {**REVIEWS[1], "stars": "five"}, *REVIEWS[2:]]
    folder = _write(tmp_path / "yelp", reviews=reviews)
    message = _error(folder)
    assert message == f"{folder / YELP_REVIEWS}, line 2, column stars: stars 'five' is not a number"
    with pytest.raises(DataError) as err:
        read_table(folder, "truth", format="yelp")
    assert str(err.value) == message
    recs = tmp_path / "recs.tsv"
    recs.write_text("user\titem\tscore\n007\tbiz_B\t0.9\n")
    for args in (["data", "stats", str(folder), "--format", "yelp"],
                 ["evaluate", "--truth", str(folder), "--truth-format", "yelp", "--recs", str(recs), "--metrics",
                  "mrr"]):  # fmt: skip
        assert main(args) == 2
        assert capsys.readouterr().err == f"error: {message}\n"
