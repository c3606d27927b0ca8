"""Studies that fit models and call evaluate/simulate: attacks, freshness, partitions, metaeval, axioms, slicing.

Studies compute results; their figures are drawn in `receval.report`.
"""
