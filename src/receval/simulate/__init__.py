"""Cyclic (interactive) simulation: :func:`simulate` returns a :class:`Trajectory`.

>>> from receval.simulate import simulate, Trajectory, METRICS
>>> METRICS[:4]
('precision', 'recall', 'anti_precision', 'fallout')
"""

from receval.simulate.core import METRICS, Trajectory, simulate, simulate_many

__all__ = ["METRICS", "Trajectory", "simulate", "simulate_many"]
