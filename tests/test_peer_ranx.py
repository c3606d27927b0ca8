"""ranx's own metric test cases (tests/peers/ranx/cases.json) run through receval with convention=ranx."""

from __future__ import annotations

import pytest

from peers import peer_cases

CASES = peer_cases.load("ranx")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_ranx_case(case: peer_cases.Case) -> None:
    peer_cases.check(case)
