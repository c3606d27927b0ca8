"""Microsoft Recommenders' own metric test cases (tests/peers/msr/cases.json) run through receval with
convention=msr."""

from __future__ import annotations

import pytest

from peers import peer_cases

CASES = peer_cases.load("msr")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_msr_case(case: peer_cases.Case) -> None:
    peer_cases.check(case)
