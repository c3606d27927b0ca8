"""iALS: implicit-feedback ALS on the binary interactions, the strong baseline of Rendle et al. (RecSys 2022).

Hu, Koren & Volinsky's weighted matrix factorisation ("Collaborative Filtering for
Implicit Feedback Datasets", ICDM 2008) through ``implicit``'s
``AlternatingLeastSquares``, fitted as :class:`~receval.recommenders.als.HKV` fits it
(BLAS on one thread, implicit's own ``num_threads``), on the binary matrix the other
item-based baselines learn from: a 1 for each training rating at or above
``threshold`` (every rating when None; see
:func:`~receval.recommenders.linear.interaction_matrix`), which implicit weighs by the
confidence ``alpha``. ``factors``, ``regularization``, ``alpha`` and ``iterations``
default to implicit's own (100, 0.01, 1.0, 15): Rendle, Krichene, Zhang & Koren
("Revisiting the Performance of iALS on Item Recommendation Benchmarks", RecSys 2022)
show that these are the parameters to tune before comparing against it. ``seed`` is
implicit's ``random_state``: the same seed gives the same factors (and lists) on every
run, with one thread or several (each user's and item's solve is independent).

``score(users)`` is ``user_factors @ item_factors.T`` for those users (float64) and
``score_items(users, items)`` the dot products of the given pairs only, both HKV's.

Examples
--------
>>> from receval import Interactions
>>> train = Interactions.from_arrays([0, 0, 1, 1, 2], [0, 1, 1, 2, 2], [5, 4, 5, 3, 4])
>>> model = IALS(factors=4, iterations=5).fit(train)
>>> model.score([0, 1]).shape, model.score_items([0], [[2, 0]]).shape
((2, 3), (1, 2))
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.recommenders.als import HKV, check_implicit
from receval.recommenders.linear import _check_threshold, interaction_matrix

__all__ = ["IALS"]


class IALS(HKV):
    """iALS (Hu, Koren & Volinsky 2008) on binary interactions, through implicit; see the module docstring.

    Parameters
    ----------
    factors, regularization, alpha, iterations
        As implicit's ``AlternatingLeastSquares`` (``alpha``: the confidence weight of an interaction).
    threshold
        Training ratings at or above it are the interactions; None: every rating.
    use_cg
        Conjugate-gradient solver (implicit's default) or exact Cholesky.
    num_threads
        implicit's threads (0 = all cores; at most :data:`~receval.recommenders.als.MAX_THREADS`).
    seed
        implicit's ``random_state``.

    Examples
    --------
    >>> IALS(factors=8).get_params()["alpha"]
    1.0
    """

    def __init__(
        self,
        factors: int = 100,
        regularization: float = 0.01,
        alpha: float = 1.0,
        iterations: int = 15,
        threshold: float | None = 4.0,
        use_cg: bool = True,
        num_threads: int = 0,
        seed: int = 0,
    ):
        self.factors = factors
        self.regularization = regularization
        self.alpha = alpha
        self.iterations = iterations
        self.threshold = threshold  # type: ignore[assignment]  # HKV's is a rating; here None means every rating
        self.use_cg = use_cg
        self.num_threads = num_threads
        self.seed = seed

    def _validate(self) -> None:
        for name in ("factors", "iterations", "num_threads"):
            value = getattr(self, name)
            low = 0 if name == "num_threads" else 1
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
                raise ConfigError(f"{name} must be an integer >= {low}, got {value!r}")
        if not (self.alpha > 0 and 0 <= self.regularization < np.inf):
            raise ConfigError(
                f"alpha must be > 0 and regularization >= 0 (finite), got {self.alpha!r} and {self.regularization!r}"
            )
        check_implicit("", self.get_params())
        _check_threshold(self.threshold)

    def confidence_matrix(self, train: Interactions) -> sp.csr_matrix:
        """The binary users x items matrix handed to implicit (float32; implicit scales it by ``alpha``).

        Returns
        -------
        scipy.sparse.csr_matrix of float32
            A 1 at each training pair rated at or above ``threshold`` (every pair when None).

        Examples
        --------
        >>> from receval import Interactions
        >>> IALS().confidence_matrix(Interactions.from_arrays([0, 1], [0, 0], [5, 2])).toarray().tolist()
        [[1.0], [0.0]]
        """
        return sp.csr_matrix(interaction_matrix(train, self.threshold, type(self).__name__), dtype=np.float32)
