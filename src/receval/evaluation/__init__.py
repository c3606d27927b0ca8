"""One-shot evaluation: recommendation lists (or rating predictions) × truth × metrics.

The package's rooms, each holding one part of the one-shot protocol:

- :mod:`~receval.evaluation.oneshot` — the entry points :func:`evaluate` (lists and
  truth as users hold them) and :func:`evaluate_model` (fit, rank, evaluate), and the
  checks of their options (:func:`check_convention`, :func:`check_cold_start`);
- :mod:`~receval.evaluation.align` — the data boundary: runs, truth and side data
  aligned on the same users and items (:func:`to_rankings`, the tie rules);
- :mod:`~receval.evaluation._result` — what an evaluation returns
  (:class:`EvaluationResult`, :class:`Conventions`);
- :mod:`~receval.evaluation.sharded` and :mod:`~receval.evaluation.sharded_files` — one
  evaluation split by user rows across workers (arrays in memory, or Parquet files
  larger than memory), aggregated exactly;
- :mod:`~receval.evaluation.sampled` and :mod:`~receval.evaluation.candidates` — sampled
  metrics: each held-out item ranked against sampled negatives;
- :mod:`~receval.evaluation.points` — next-item evaluation points (:func:`evaluate_points`):
  runs and truth keyed by (user, point), per-event or per-user weighting, repeat and new items.

Examples
--------
>>> import pandas as pd
>>> truth = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"], "rating": [5, 2, 4]})
>>> recs = pd.DataFrame({"user": ["a", "a", "b"], "item": ["y", "x", "z"], "score": [0.9, 0.5, 0.7]})
>>> evaluate(recs, truth, ["precision@2", "mrr"], threshold=4).summary
{'precision@2': 0.25, 'mrr': 0.25}
"""

from receval.evaluation._result import Conventions, EvaluationResult
from receval.evaluation.align import to_rankings
from receval.evaluation.oneshot import check_cold_start, check_convention, evaluate, evaluate_model
from receval.evaluation.points import PointsResult, evaluate_points

__all__ = [
    "Conventions",
    "EvaluationResult",
    "PointsResult",
    "check_cold_start",
    "check_convention",
    "evaluate",
    "evaluate_model",
    "evaluate_points",
    "to_rankings",
]
