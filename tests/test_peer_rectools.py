"""RecTools' own metric test cases (tests/peers/rectools/cases.json) run through receval with convention=rectools."""

from __future__ import annotations

import pytest

from peers import peer_cases

CASES = peer_cases.load("rectools")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_rectools_case(case: peer_cases.Case) -> None:
    peer_cases.check(case)
