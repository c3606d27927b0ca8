"""Cornac's own metric test cases (tests/peers/cornac/cases.json) run through receval with
convention=cornac."""

from __future__ import annotations

import pytest

from peers import peer_cases

CASES = peer_cases.load("cornac")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_cornac_case(case: peer_cases.Case) -> None:
    peer_cases.check(case)
