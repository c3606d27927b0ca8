"""The axiom checks: αβ-nDCG satisfies all eight; known failures of the baselines show up."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from receval.errors import ConfigError
from receval.metrics.aspects import ab_ndcg
from receval.studies.axioms import AXIOMS, axiom_table, check_axioms, markdown, standard_metrics


def ab(r, t, a, tr, **kw):
    return ab_ndcg(r, t, a, tr, k=r.shape[1], rmax=5, **kw)


def test_ab_ndcg_satisfies_every_axiom():
    table = check_axioms(ab)
    assert list(table["axiom"]) == list(AXIOMS)
    assert table["satisfied"].all(), table
    assert (table["better"] > table["worse"]).all()
    assert table.set_index("axiom").loc["MissOverNon", "witness"] == "[a0:?, a0:0] > [a0:0, a0:?]"


def test_miss_over_non_depends_on_alpha_and_the_lowest_rating():
    # on a 1..5 scale the non-relevant item has P = β·1/5 = 0.1 > α = 0.005
    t = check_axioms(ab, nonrel_rating=1).set_index("axiom")
    assert not t.loc["MissOverNon", "satisfied"]
    t = check_axioms(lambda r, tr, a, x: ab(r, tr, a, x, alpha=0.2), nonrel_rating=1).set_index("axiom")
    assert t.loc["MissOverNon", "satisfied"]


def test_baselines_fail_where_they_ignore_grades_preferences_or_unrated_items():
    table = axiom_table({"alpha_ndcg": "alpha_ndcg", "ndcg": "ndcg", "precision": "precision", "s_recall": "s_recall"})
    assert table.loc["alpha_ndcg"].to_dict() == dict(zip(AXIOMS, ["✗", "✗", "✓", "✓", "✓", "✗", "✓", "✗"], strict=True))
    assert table.loc["ndcg", "Pri"] == "✓" and table.loc["ndcg", "NonPriSatAsp"] == "✗"
    assert table.loc["ndcg", "AspRel"] == "✗" and table.loc["ndcg", "MoreAsp"] == "✗"
    assert (table.loc["precision", ["Pri", "Deep", "TopHeav"]] == "✗").all()
    assert (table.loc["s_recall", ["Pri", "AspRel", "MissOverNon"]] == "✗").all()


def test_user_defined_metric_and_witnesses():
    # a metric rewarding the first item's index violates everything it does not happen to match
    def first_item(r, t, a, tr):
        return r[:, 0].astype(float)

    table = check_axioms(first_item)
    assert set(table["satisfied"]) <= {True, False}
    assert not table.set_index("axiom").loc["Pri", "satisfied"]  # [0, 1] vs [1, 0]: 0 < 1
    constant = check_axioms(lambda r, t, a, tr: np.ones(r.shape[0]))
    assert not constant["satisfied"].any()  # ties violate
    assert (constant.set_index("axiom").loc[["TopHeav", "TopHeavComp"], "n"] == 10).all()


def test_bad_options():
    with pytest.raises(ConfigError, match="max_n"):
        check_axioms(ab, max_n=0)
    with pytest.raises(ConfigError, match="without a cutoff"):
        check_axioms("ndcg@10")


def test_docs_tables_are_the_generated_ones():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "aspects.md").read_text()
    assert markdown(axiom_table(standard_metrics())) in doc
    assert markdown(axiom_table(standard_metrics(threshold=2), nonrel_rating=1)) in doc
