"""RecBole's own metric test cases (tests/peers/recbole/cases.json) run through receval with convention=recbole."""

from __future__ import annotations

import pytest

from peers import peer_cases

CASES = peer_cases.load("recbole")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_recbole_case(case: peer_cases.Case) -> None:
    peer_cases.check(case)
