"""Print the axiom tables of docs/aspects.md (αβ-nDCG and the baselines, Parapar & Radlinski 2021).

Usage::

    python examples/aspects_axiom_table.py
"""

from receval.studies.axioms import axiom_table, check_axioms, markdown, standard_metrics

if __name__ == "__main__":
    print("Non-relevant items rated 0 (the paper's i^0):\n")
    print(markdown(axiom_table(standard_metrics())))
    print("\nNon-relevant items rated 1 (the bottom of a 1..5 scale; binary metrics: relevant = rating ≥ 2):\n")
    print(markdown(axiom_table(standard_metrics(threshold=2), nonrel_rating=1)))
    print("\nWitnesses for αβ-nDCG (values of the preferred and the other ranking):\n")
    print(check_axioms(standard_metrics()["ab_ndcg"]).to_string(index=False))
