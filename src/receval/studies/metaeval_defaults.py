"""The default metrics and systems of the meta-evaluation, apart from the study's code.

``receval metaeval --help`` shows them as the defaults of ``--metrics`` and
``--systems`` without importing :mod:`receval.studies.metaeval` (numpy, pandas, scipy).

>>> "ndcg@10" in DEFAULT_METRICS, DEFAULT_SYSTEMS[0]
(True, 'random')
"""

from __future__ import annotations

__all__ = ["DEFAULT_METRICS", "DEFAULT_SYSTEMS"]

#: Aspect-aware metrics and two relevance-only references, as compared by Parapar & Radlinski (2021).
DEFAULT_METRICS: tuple[str, ...] = (
    "ab_ndcg@10",
    "alpha_ndcg@10",
    "nerr_ia@10",
    "s_recall@10",
    "p_ia@10",
    "ndcg@10",
    "precision@10",
)
#: Recommenders whose lists are the systems of :func:`metaeval_study` (names of ``receval.recommenders.make``).
DEFAULT_SYSTEMS: tuple[str, ...] = ("random", "popularity", "item-knn", "mf", "hkv")
