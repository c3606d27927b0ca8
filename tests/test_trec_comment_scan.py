"""trec_eval's comment lines (``#`` first after white space) are found alike in a file mapped as it is and in a
compressed one read in pieces: the two searches of :func:`receval.data.tables._has_comment_lines` agree."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from receval.data import tables

CASES = [
    ("q1 Q0 d1 1 0.5 x\n", False),
    ("q1 Q0 d#1 1 0.5 x\nq1 Q0 d2 2 0.4 x#\n", False),  # '#' inside fields: no comment
    ("# a comment\nq1 Q0 d1 1 0.5 x\n", True),
    (" \t# indented, first line\nq1 Q0 d1 1 0.5 x\n", True),
    ("q1 Q0 d1 1 0.5 x\n\t  #last, no newline", True),
    ("q1 Q0 d1 1 0.5 x\n#", True),
    ("", False),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_mapped_and_compressed_files_find_the_same_comments(tmp_path: Path, text: str, expected: bool) -> None:
    plain, packed = tmp_path / "run.trec", tmp_path / "run.trec.gz"
    plain.write_text(text)
    packed.write_bytes(gzip.compress(text.encode()))
    assert tables._has_comment_lines(plain) is expected
    assert tables._has_comment_lines(packed) is expected


def test_a_comment_after_the_first_piece_is_found(tmp_path: Path) -> None:
    """Past the 16 MB a compressed file is read in at once, and in a mapped file: found either way."""
    body = "q1 Q0 d1 1 0.5 x\n" * ((1 << 24) // 17 + 10)
    for tail, expected in (("  # late\n", True), ("d#9\n", False)):
        plain, packed = tmp_path / "run.trec", tmp_path / "run.trec.gz"
        plain.write_text(body + tail)
        packed.write_bytes(gzip.compress((body + tail).encode(), compresslevel=1))
        assert tables._has_comment_lines(plain) is expected
        assert tables._has_comment_lines(packed) is expected
