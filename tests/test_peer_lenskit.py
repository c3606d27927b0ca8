"""LensKit's own metric test cases (tests/peers/lenskit/cases.json) run through receval with convention=lenskit."""

from __future__ import annotations

import pytest

from peers import peer_cases

CASES = peer_cases.load("lenskit")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_lenskit_case(case: peer_cases.Case) -> None:
    peer_cases.check(case)
