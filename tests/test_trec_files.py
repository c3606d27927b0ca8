"""TREC runs and qrels read as trec_eval reads them (usnistgov/trec_eval get_trec_results.c, get_qrels.c).

A run line is ``qid Q0 docid rank score tag`` and every field after the tag is ignored
(a tag written with spaces in a tab-separated file among them); a qrels line has exactly
four fields; a line whose first character after white space is ``#`` is a comment.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from receval import evaluate
from receval.data.formats import detect
from receval.data.tables import read_table
from receval.errors import DataError

pytrec_eval = pytest.importorskip("pytrec_eval")

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 2\n2 0 d1 1\n2 0 d4 1\n"
RUN = "1 Q0 d3 1 0.9 tag\n1 Q0 d2 2 0.7 tag\n1 Q0 d1 3 0.5 tag\n2 Q0 d4 1 0.8 tag\n2 Q0 d2 2 0.6 tag\n"


def _rows(path: Path, kind: str) -> list[tuple]:
    table = read_table(path, kind)
    value = "score" if kind == "recommendations" else "rating"
    return list(zip(table["user"].astype(str), table["item"].astype(str), table[value], strict=True))


def _pytrec(qrels: str, run: str, measures: set[str]) -> dict:
    def parse(text: str, n: int) -> dict:
        out: dict = {}
        for line in text.splitlines():
            f = line.split()
            if not f or f[0].startswith("#"):
                continue
            out.setdefault(f[0], {})[f[2]] = int(f[3]) if n == 4 else float(f[4])
        return out

    return pytrec_eval.RelevanceEvaluator(parse(qrels, 4), measures).evaluate(parse(run, 6))


def test_comment_lines_are_skipped_and_lines_keep_their_numbers(tmp_path: Path) -> None:
    clean, commented = tmp_path / "clean.run", tmp_path / "commented"  # no extension: the content tells
    clean.write_text(RUN)
    lines = RUN.splitlines(keepends=True)
    commented.write_text("# run of 2026-12-02\n" + "".join(lines[:2]) + "   # indented comment\n" + "".join(lines[2:]))
    assert detect(commented) == ("trec", False)
    assert _rows(commented, "recommendations") == _rows(clean, "recommendations")
    bad = tmp_path / "bad.run"
    bad.write_text("# header comment\n" + lines[0] + "1 Q0 d9 2 high tag\n")
    with pytest.raises(DataError, match=r"bad\.run, line 3, column score: score 'high' is not a number"):
        read_table(bad, "recommendations")


def test_a_hash_inside_a_field_is_not_a_comment(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text("1 Q0 d#1 1 0.9 tag\n1 Q0 #d2 2 0.5 tag#x\n")
    assert [r[1] for r in _rows(path, "recommendations")] == ["d#1", "#d2"]


def test_fields_after_the_run_tag_are_ignored(tmp_path: Path) -> None:
    spaced = tmp_path / "tab"  # tab-separated, the tag written with spaces; no extension: the content tells
    spaced.write_text(RUN.replace(" ", "\t").replace("\ttag\n", "\tmy run tag\n"))
    extra = tmp_path / "extra"  # space-separated, trailing fields on some lines
    extra.write_text(RUN.replace(" tag\n", " tag 17 more\n", 2))
    clean = tmp_path / "clean.run"
    clean.write_text(RUN)
    for path in (spaced, extra):
        assert detect(path) == ("trec", False), path
        assert _rows(path, "recommendations") == _rows(clean, "recommendations"), path


def test_a_short_line_and_a_long_qrels_line_are_refused_with_their_line(tmp_path: Path) -> None:
    short = tmp_path / "short.run"
    short.write_text("# c\n1 Q0 d1 1 0.4 tag\n1 Q0 d1\n")
    with pytest.raises(DataError, match=r"short\.run, line 3: has 3 fields, expected at least 6; a TREC run line is"):
        read_table(short, "recommendations", format="trec")
    qrels = tmp_path / "long.qrels"
    qrels.write_text("1 0 d1 1\n1 0 d2 0 extra\n")  # trec_eval's get_qrels.c refuses a fifth field
    with pytest.raises(DataError, match=r"long\.qrels, line 2: has 5 fields"):
        read_table(qrels, "truth", format="trec")


def test_commented_compressed_files_score_as_trec_eval(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels.gz"
    qrels.write_bytes(gzip.compress(("# judged by hand\n" + QRELS).encode()))
    run = tmp_path / "r.run"
    run.write_text("#comment\n" + RUN.replace(" tag\n", "\ttag with spaces\n"))
    result = evaluate(run, qrels, ["map", "ndcg@100(convention=trec_eval)", "mrr"])
    expected = _pytrec(QRELS, RUN, {"map", "ndcg", "recip_rank"})
    per_user = result.per_user.set_index("user")
    for user, values in expected.items():
        assert per_user.loc[user, "map"] == pytest.approx(values["map"], abs=1e-12)
        assert per_user.loc[user, "ndcg@100(convention=trec_eval)"] == pytest.approx(values["ndcg"], abs=1e-12)
        assert per_user.loc[user, "mrr"] == pytest.approx(values["recip_rank"], abs=1e-12)


_ID = st.text(alphabet="abcdXYZ0123456789_#.-", min_size=1, max_size=6).filter(lambda t: not t.startswith("#"))


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(st.tuples(_ID, _ID, st.integers(0, 1000)), min_size=1, max_size=12, unique_by=lambda t: t[:2]),
    comments=st.lists(st.tuples(st.integers(0, 12), st.sampled_from(["#", " #x", "\t# y z", "##"])), max_size=4),
    extra=st.lists(st.sampled_from(["", " x", " 1 2", "\tz"]), min_size=12, max_size=12),
    sep=st.sampled_from([" ", "\t", "  "]),
)
def test_any_run_reads_the_same_with_comments_and_trailing_fields(
    tmp_path_factory, lines, comments, extra, sep
) -> None:
    folder = tmp_path_factory.mktemp("trec")
    body = [sep.join([u, "Q0", d, str(j + 1), str(score / 7), "tag"]) for j, (u, d, score) in enumerate(lines)]
    clean, noisy = folder / "clean.run", folder / "noisy.run"
    clean.write_text("\n".join(body) + "\n")
    out = [line + extra[j] for j, line in enumerate(body)]
    for at, text in sorted(comments, reverse=True):
        out.insert(min(at, len(out)), text)
    noisy.write_text("\n".join(out) + "\n")
    assert _rows(noisy, "recommendations") == _rows(clean, "recommendations")
