"""Pure computations on arrays: significance tests, rank agreement, magic barrier, user coherence.

This layer fits no model and draws no figure; `receval.evaluate` may use it.
"""
