"""The codes the online recommenders write into their kernel parameters (``params[0]``, ``params[1]``).

Apart from :mod:`receval.recommenders.bandits._kernels` so that a model can be built and fitted without
importing numba (importing it and loading its cached kernels costs about 0.5 s): only a simulation, which
runs the kernels, needs them compiled.

>>> (RANDOM, ARGMAX, THOMPSON), (COUNT, MEAN, UCB), MIN_BETA
((0, 1, 2), (0, 1, 2), 1e-06)
"""

from __future__ import annotations

RANDOM, ARGMAX, THOMPSON = 0, 1, 2
"""Item policies: a uniformly random available item, the best score, or Thompson sampling."""
COUNT, MEAN, UCB = 0, 1, 2
"""Score kinds of the argmax policy: the positive count, the mean feedback, or the mean plus the UCB bonus."""

MIN_BETA = 1e-6
"""The smallest parameter of a Beta law the kernels draw from (Thompson sampling, the kNN bandit's weights).

numba's Beta sampler for parameters ≤ 1 is Jöhnk's rejection without numpy's log-space fallback: it
rejects a draw whenever both powers underflow, so its time grows as 1/parameter (10⁻⁸: about 5 ms per
draw, 10⁻¹⁰ about a second, 10⁻³⁰⁰ never returns)."""
