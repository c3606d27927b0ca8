"""Calibration: whether a list reflects the aspects (genres) of the user's training profile in their proportions.

``miscalibration@k`` (Steck, "Calibrated Recommendations", RecSys 2018): with p(g|i) an item's
aspects sharing one unit equally (Steck's genre distribution of a movie),

- the profile's distribution p(g|u) = Σ_{i∈H_u} p(g|i) / |H_u| over the user's training items
  (every training item weighs 1);
- the list's distribution q(g|u) = Σ_{r≤k} w_r p(g|i_r) / Σ_r w_r, w_r = 1 (``weighting=uniform``, the
  default) or the DCG discount 1 / log2(r + 1) (``weighting=rank``, Steck's rank-weighted form);
- ``divergence=kl`` (the default, Steck's C_KL): Σ_g p log(p / q̃), q̃ = (1 − α) q + α p with
  ``alpha`` = 0.01 as in Steck (so that an aspect missing from the list costs log(1/α), not ∞);
  ``divergence=js``: the Jensen–Shannon divergence of p and q̃ in bits (in [0, 1]), the form
  RADio uses (Vrijenhoek et al., RecSys 2022); ``alpha=0`` gives the unsmoothed JS.

0 when the list reproduces the profile's distribution; lower is better. Items without an aspect
add nothing; a user without a training item with an aspect, or with an empty list, is not scored
(NaN). Axioms (:mod:`receval.studies.axioms`): see :data:`AXIOMS`.

Examples
--------
>>> import scipy.sparse as sp
>>> from receval.metrics._input import MetricInput
>>> aspects = sp.csr_matrix(np.array([[1, 0], [0, 1], [1, 1.0]]))
>>> train = sp.csr_matrix(np.array([[1, 1, 0.0]]))  # profile: half a, half b
>>> data = MetricInput(np.array([[2, 0]]), sp.csr_matrix((1, 3)), train=train, aspects=aspects)
>>> miscalibration(data, 1).round(6).tolist()  # item 2 is half a, half b
[0.0]
>>> miscalibration(data, 2).round(4).tolist()  # 3/4 a, 1/4 b: 0.5 log(0.5/0.7475) + 0.5 log(0.5/0.2525)
[0.1405]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from receval.data.csr import as_scipy
from receval.errors import MetricError
from receval.metrics._definition import register_metric
from receval.metrics._input import MetricInput

if TYPE_CHECKING:
    import scipy.sparse as sp

    from receval.data.csr import CSR

__all__ = [
    "AXIOMS",
    "DIVERGENCES",
    "WEIGHTINGS",
    "aspect_distributions",
    "dense_rows",
    "item_shares",
    "list_matrix",
    "miscalibration",
]

DIVERGENCES = ("kl", "js")
WEIGHTINGS = ("uniform", "rank")
# the axioms of Parapar & Radlinski (receval.studies.axioms.calibration_metrics) each calibration form satisfies;
# tests/test_calibration.py checks this table against the executable checks. Calibration compares aspect
# proportions and reads no truth rating, so the relevance axioms (Pri, Deep, TopHeav, TopHeavComp, MissOverNon)
# fail; the unweighted form ignores the order and so ties every pair; the rank-weighted form prefers the order
# that brings the list's distribution nearer the profile's (NonPriSatAsp, AspRel, MoreAsp).
AXIOMS: Mapping[str, tuple[str, ...]] = {
    "miscalibration_kl": (),
    "miscalibration_js": (),
    "miscalibration_kl_rank": ("NonPriSatAsp", "AspRel", "MoreAsp"),
    "miscalibration_js_rank": ("NonPriSatAsp", "AspRel", "MoreAsp"),
}


# item shares are multiplied as a dense array up to this many cells (a sparse × dense product gives dense rows)
_DENSE_CELLS = 1 << 24


def item_shares(aspects: CSR | sp.csr_matrix) -> np.ndarray | sp.csr_matrix:
    """p(g|i): each item's aspects (or groups) sharing one unit equally, rows without one empty; dense when small.

    >>> import scipy.sparse as sp
    >>> item_shares(sp.csr_matrix(np.array([[1, 1], [0, 0], [0, 3.0]]))).tolist()
    [[0.5, 0.5], [0.0, 0.0], [0.0, 1.0]]
    """
    import scipy.sparse as sp

    binary = as_scipy(aspects).tocsr().astype(np.float64, copy=True)
    binary.data = np.ones_like(binary.data)
    count = np.asarray(binary.sum(axis=1)).ravel()
    shares = sp.csr_matrix(sp.diags(np.divide(1.0, count, out=np.zeros_like(count), where=count > 0)) @ binary)
    return shares.toarray() if shares.shape[0] * shares.shape[1] <= _DENSE_CELLS else shares


def dense_rows(product: Any) -> np.ndarray:
    """A product with :func:`item_shares` as a dense array (it is sparse when the shares are)."""
    import scipy.sparse as sp

    return np.asarray(product.todense()) if sp.issparse(product) else np.asarray(product)


def aspect_distributions(
    data: MetricInput, k: int | None, weighting: str = "uniform"
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The profile's and the list's aspect distributions per user, and their masses before normalising.

    Returns
    -------
    (p, q, profile_mass, list_mass) : (n_users, n_aspects) ×2 and (n_users,) ×2 float arrays
        Rows of ``p`` and ``q`` sum to 1 where the mass is > 0 (else they are 0).

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> aspects = sp.csr_matrix(np.array([[1, 0], [0, 1.0]]))
    >>> d = MetricInput(np.array([[1, 0]]), sp.csr_matrix((1, 2)), train=sp.csr_matrix(np.array([[1, 0.0]])),
    ...                 aspects=aspects)
    >>> p, q, _, _ = aspect_distributions(d, 2, "rank")
    >>> p.tolist(), q.round(4).tolist()  # ranks weigh 1 and 1/log2(3)
    ([[1.0, 0.0]], [[0.3869, 0.6131]])
    """
    if data.aspects is None or data.train is None:
        raise MetricError("calibration needs the item aspects and the training profiles; pass aspects= and train=")
    shares = item_shares(data.aspects)
    profile = as_scipy(data.train).tocsr().astype(np.float64, copy=True)
    profile.data = np.ones_like(profile.data)
    p = dense_rows(profile @ shares)
    top = data.rankings if k is None else data.rankings[:, :k]
    valid = top >= 0
    weights = np.ones(top.shape[1]) if weighting == "uniform" else 1.0 / np.log2(np.arange(2, top.shape[1] + 2))
    listed = list_matrix(top, weights, data.n_items)
    q = dense_rows(listed @ shares)
    profile_mass, list_mass = p.sum(axis=1), q.sum(axis=1)
    p = np.divide(p, profile_mass[:, None], out=np.zeros_like(p), where=profile_mass[:, None] > 0)
    q = np.divide(q, list_mass[:, None], out=np.zeros_like(q), where=list_mass[:, None] > 0)
    list_mass = np.where(valid.any(axis=1), np.maximum(list_mass, 0.0), np.nan)
    return p, q, profile_mass, list_mass


def list_matrix(top: np.ndarray, weights: np.ndarray, n_items: int) -> sp.csr_matrix:
    """Users × items CSR holding ``weights[r]`` at each listed item of rank r (padding left out), built row by row
    without sorting (a row's columns stay in rank order, which products and sums accept).

    >>> list_matrix(np.array([[2, 0], [1, -1]]), np.array([1.0, 0.5]), 3).toarray().tolist()
    [[0.5, 0.0, 1.0], [0.0, 1.0, 0.0]]
    """
    import scipy.sparse as sp

    valid = top >= 0
    indptr = np.concatenate(([0], np.cumsum(valid.sum(axis=1))))
    data = np.broadcast_to(weights, top.shape)[valid]
    return sp.csr_matrix((data, top[valid], indptr), shape=(top.shape[0], n_items))


def _kl(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Σ p log(p / q) per row, 0 log 0 = 0 (q > 0 wherever p > 0 by construction)."""
    ratio = np.divide(p, q, out=np.ones_like(p), where=p > 0)
    return (p * np.log(ratio)).sum(axis=1)


def _check_calibration(params: Mapping[str, Any], label: str) -> None:
    alpha = params.get("alpha", 0.01)
    if params.get("divergence", "kl") == "kl" and not 0 < alpha <= 1:
        raise MetricError(f"metric {label!r}: alpha must be in (0, 1] for divergence=kl (Steck: 0.01), got {alpha!r}")
    if not 0 <= alpha <= 1:
        raise MetricError(f"metric {label!r}: alpha must be in [0, 1], got {alpha!r}")


@register_metric(
    "miscalibration",
    direction="lower",
    defaults={"alpha": 0.01, "weighting": "uniform", "divergence": "kl"},
    choices={"weighting": WEIGHTINGS, "divergence": DIVERGENCES},
    check=_check_calibration,
    needs_train=True,
    needs_aspects=True,
    description="Steck's miscalibration C_KL (or JS) of the list's aspect distribution against the profile's; "
    "Steck, RecSys 2018; Vrijenhoek et al., RecSys 2022",
)
def miscalibration(
    data: MetricInput, k: int | None, alpha: float = 0.01, weighting: str = "uniform", divergence: str = "kl"
) -> np.ndarray:
    """Per user: the divergence of the profile's aspect distribution from the list's (see the module notes)."""
    p, q, profile_mass, list_mass = aspect_distributions(data, k, weighting)
    smoothed = (1.0 - alpha) * q + alpha * p
    if divergence == "kl":
        value = _kl(p, smoothed)
    else:
        middle = 0.5 * (p + smoothed)
        value = (0.5 * _kl(p, middle) + 0.5 * _kl(smoothed, middle)) / np.log(2.0)
    return np.where((profile_mass > 0) & ~np.isnan(list_mass), value, np.nan)
