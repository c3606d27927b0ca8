"""RecPack's own metric test cases (tests/peers/recpack/cases.json) run through receval with convention=recpack."""

from __future__ import annotations

import pytest

from peers import peer_cases

CASES = peer_cases.load("recpack")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_recpack_case(case: peer_cases.Case) -> None:
    peer_cases.check(case)
