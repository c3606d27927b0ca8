"""The magic barrier: the lowest RMSE any rating predictor can reach (Said & Bellogín, UMUAI 2018, §2).

Ratings are ``r_ui = mu_ui + eps_ui`` with ``E[eps_ui] = 0``; the RMSE of the optimal
predictor (the one that knows every ``mu_ui``) is ``B = sqrt(sum p(u,i) V[eps_ui])``.
Algorithm 1 of Said & Bellogín (UMUAI 2018) estimates it from user-item pairs rated
``m >= 2`` times: per pair the sample mean ``mu_hat`` and the noise variance
``eps_hat^2 = 1/m sum_t (mu_hat - r_t)^2``, then ``B_hat = sqrt(mean over pairs of
eps_hat^2)``; the per-user barrier restricts the pairs to that user's.

``ddof=0`` is the paper's ``1/m`` estimator. Its expected value is ``(m-1)/m`` times the
noise variance, so the barrier it gives is low by about ``sqrt((m-1)/m)`` (0.71 for the
paper's m = 2). ``ddof=1`` divides by ``m - 1`` and is unbiased for the variance.

An empirical RMSE below the barrier of the same users means the model fits noise:
:func:`check_overfitting` flags it.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from receval.data.interactions import Interactions
from receval.errors import DataError
from receval.validate import check_memory

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MagicBarrier", "OverfittingCheck", "pair_statistics", "magic_barrier", "check_overfitting"]

_BOOT_CELLS = 16_000_000  # bootstrap replicate values held at once (128 MB)
_NO_RERATINGS = (
    "the magic barrier needs repeated ratings of the same (user, item) pair (m >= 2), "
    "and {what}. Alternatives: user coherence (receval.stats.coherence, `receval coherence`) "
    "predicts which users are noisy from ordinary training data; or simulate re-ratings with a "
    "known noise level with receval.data.synthetic.generate_with_truth(..., reratings=5, noise=(0.1, 0.5))."
)


def pair_statistics(data: Interactions, *, ddof: Literal[0, 1] = 0) -> pd.DataFrame:
    """Per (user, item) pair rated at least twice: ``m``, sample mean and noise variance.

    Pairs rated once carry no information on noise and are left out; their count is in
    ``frame.attrs["n_single"]``.

    Parameters
    ----------
    data
        Interactions that keep repeated ratings (``data.has_duplicates``).
    ddof
        0 divides the squared deviations by ``m`` (Algorithm 1), 1 by ``m - 1``.

    Returns
    -------
    DataFrame with integer columns ``user``, ``item`` (indices), ``m``, and float columns
    ``mean``, ``variance``, sorted by user then item.

    Examples
    --------
    >>> d = Interactions.from_arrays([0, 0, 0, 0, 1], [0, 0, 1, 1, 0], [3, 5, 2, 2, 4])
    >>> pair_statistics(d).to_dict("list")
    {'user': [0, 0], 'item': [0, 1], 'm': [2, 2], 'mean': [4.0, 2.0], 'variance': [1.0, 0.0]}
    >>> pair_statistics(d, ddof=1)["variance"].tolist()
    [2.0, 0.0]
    """
    import pandas as pd

    if ddof not in (0, 1):
        raise DataError(f"ddof={ddof!r} is not supported; use 0 (the paper's 1/m) or 1 (unbiased 1/(m-1))")
    keys = data.users.astype(np.int64) * data.n_items + data.items
    uniq, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    r = data.ratings.astype(np.float64)
    sums = np.bincount(inverse, weights=r, minlength=len(uniq))
    means = sums / counts
    dev2 = np.bincount(inverse, weights=(r - means[inverse]) ** 2, minlength=len(uniq))
    keep = counts >= 2
    m = counts[keep]
    frame = pd.DataFrame(
        {
            "user": (uniq[keep] // data.n_items).astype(np.int64),
            "item": (uniq[keep] % data.n_items).astype(np.int64),
            "m": m.astype(np.int64),
            "mean": means[keep],
            "variance": dev2[keep] / (m - ddof),
        }
    )
    frame.attrs["n_single"] = int(np.count_nonzero(counts == 1))
    return frame


@dataclass(frozen=True)
class MagicBarrier:
    """Magic-barrier estimates of a data set with repeated ratings.

    Attributes
    ----------
    system : float
        ``B_hat_X`` over all pairs rated at least twice.
    system_ci : tuple of float
        Bootstrap percentile interval of ``system`` (``(nan, nan)`` with ``n_bootstrap=0``).
    users : DataFrame
        One row per user with at least one repeated pair, indexed by the original user id:
        ``index`` (user index), ``n_pairs``, ``barrier``, ``ci_low``, ``ci_high``.
    n_pairs, n_single : int
        Pairs used, and pairs rated only once (left out).
    m_min, m_max : int
        Smallest and largest number of ratings per used pair.
    ddof : int
    confidence : float
    resample : str
        What the system-level bootstrap resampled (``"pairs"`` or ``"users"``).
    """

    system: float
    system_ci: tuple[float, float]
    users: pd.DataFrame
    n_pairs: int
    n_single: int
    m_min: int
    m_max: int
    ddof: int
    confidence: float
    resample: str

    def summary(self) -> dict[str, Any]:
        """JSON-ready figures (no per-user table)."""
        return {
            "system": self.system,
            "system_ci": list(self.system_ci),
            "confidence": self.confidence,
            "ddof": self.ddof,
            "resample": self.resample,
            "n_pairs": self.n_pairs,
            "n_single": self.n_single,
            "n_users": len(self.users),
            "m_min": self.m_min,
            "m_max": self.m_max,
        }


def magic_barrier(
    data: Interactions,
    *,
    ddof: Literal[0, 1] = 0,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    resample: Literal["pairs", "users"] = "pairs",
    seed: int | np.random.Generator = 0,
) -> MagicBarrier:
    """Estimate the magic barrier of a system and of each user (Algorithm 1).

    Parameters
    ----------
    data
        Interactions holding repeated ratings; pairs rated once are left out (counted).
    ddof
        0: the paper's estimator (``1/m``, low by about ``sqrt((m-1)/m)``); 1: unbiased
        variance per pair (``1/(m-1)``).
    n_bootstrap
        Bootstrap replicates for the percentile intervals (0 skips them).
    confidence
        Coverage of the intervals.
    resample
        System interval: resample pairs (i.i.d. pairs, as in Algorithm 1) or users
        (a cluster bootstrap, wider when users differ in noise). Per-user intervals always
        resample that user's pairs.
    seed
        Seed or generator for the bootstrap.

    Raises
    ------
    DataError
        When no pair is rated twice — with the alternatives (coherence, simulated re-ratings).

    Returns
    -------
    MagicBarrier
        The system estimate with its interval, the per-user estimates and the counts of
        pairs used and left out (rated once).

    Examples
    --------
    >>> d = Interactions.from_arrays(["a"] * 4 + ["b"] * 2, [1, 1, 2, 2, 1, 1], [3, 5, 2, 2, 4, 4])
    >>> mb = magic_barrier(d, n_bootstrap=0)
    >>> round(mb.system, 4), mb.users["barrier"].round(4).to_dict()
    (0.5774, {'a': 0.7071, 'b': 0.0})
    >>> round(magic_barrier(d, ddof=1, n_bootstrap=0).system, 4)
    0.8165
    """
    import pandas as pd

    if not 0 < confidence < 1:
        raise DataError(f"confidence={confidence} must lie strictly between 0 and 1 (e.g. 0.95)")
    if n_bootstrap < 0:
        raise DataError(f"n_bootstrap={n_bootstrap} must be 0 (no intervals) or positive")
    if resample not in ("pairs", "users"):
        raise DataError(f"resample={resample!r} is not supported; use 'pairs' or 'users'")
    if data.n_ratings == 0:
        raise DataError(_NO_RERATINGS.format(what="the data set is empty"))
    pairs = pair_statistics(data, ddof=ddof)
    if pairs.empty:
        raise DataError(
            _NO_RERATINGS.format(
                what=f"every one of the {pairs.attrs['n_single']} pairs of this data set is rated once"
            )
        )
    var = pairs["variance"].to_numpy()
    users = pairs["user"].to_numpy()
    uniq_users, user_pos, n_per_user = np.unique(users, return_inverse=True, return_counts=True)
    user_sum = np.bincount(user_pos, weights=var)
    per_user = np.sqrt(user_sum / n_per_user)
    system = float(np.sqrt(var.mean()))

    alpha = (1 - confidence) / 2
    sys_ci = (np.nan, np.nan)
    lo = hi = np.full(len(uniq_users), np.nan)
    if n_bootstrap:  # the replicates held at once: one value each, a row of user weights each with resample='users'
        held = 8.0 * n_bootstrap * (len(uniq_users) + 1 if resample == "users" else 2)
        check_memory(held, f"{n_bootstrap:,} bootstrap replicates", "use fewer bootstrap replicates")
        rng = np.random.default_rng(seed)
        sys_reps = _bootstrap_system(var, user_sum, n_per_user, n_bootstrap, resample, rng)
        sys_ci = (float(np.quantile(sys_reps, alpha)), float(np.quantile(sys_reps, 1 - alpha)))
        lo, hi = _bootstrap_users(var, user_pos, n_per_user, n_bootstrap, alpha, rng)
    table = pd.DataFrame(
        {"index": uniq_users, "n_pairs": n_per_user, "barrier": per_user, "ci_low": lo, "ci_high": hi},
        index=pd.Index(data.user_ids[uniq_users], name="user"),
    )
    m = pairs["m"].to_numpy()
    return MagicBarrier(
        system=system,
        system_ci=(float(sys_ci[0]), float(sys_ci[1])),
        users=table,
        n_pairs=len(pairs),
        n_single=int(pairs.attrs["n_single"]),
        m_min=int(m.min()),
        m_max=int(m.max()),
        ddof=int(ddof),
        confidence=float(confidence),
        resample=resample,
    )


def _bootstrap_system(
    var: np.ndarray,
    user_sum: np.ndarray,
    n_per_user: np.ndarray,
    n_boot: int,
    resample: str,
    rng: np.random.Generator,
) -> np.ndarray:
    if resample == "users":
        # weights = how often each user is drawn; the barrier of the drawn users' pairs
        w = rng.multinomial(len(user_sum), np.full(len(user_sum), 1 / len(user_sum)), size=n_boot)
        return np.sqrt((w @ user_sum) / (w @ n_per_user))
    n = len(var)
    chunk = max(1, 4_000_000 // n)
    out = np.empty(n_boot)
    for start in range(0, n_boot, chunk):
        stop = min(n_boot, start + chunk)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = np.sqrt(var[idx].mean(axis=1))
    return out


def _bootstrap_users(
    var: np.ndarray, user_pos: np.ndarray, n_per_user: np.ndarray, n_boot: int, alpha: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile intervals per user, resampling each user's own pairs (pairs are sorted by user).

    Users are processed in blocks so the replicate matrix stays under ``_BOOT_CELLS`` values.
    """
    n_users = len(n_per_user)
    starts = np.r_[0, np.cumsum(n_per_user)]
    lo, hi = np.empty(n_users), np.empty(n_users)
    block = max(1, _BOOT_CELLS // n_boot)
    for first_user in range(0, n_users, block):
        last_user = min(n_users, first_user + block)
        a, b = starts[first_user], starts[last_user]
        pos = user_pos[a:b] - first_user
        size = n_per_user[user_pos[a:b]]
        first = starts[user_pos[a:b]]
        reps = np.empty((n_boot, last_user - first_user))
        for r in range(n_boot):
            draw = first + (rng.random(b - a) * size).astype(np.int64)
            reps[r] = np.bincount(pos, weights=var[draw], minlength=last_user - first_user)
        reps = np.sqrt(reps / n_per_user[first_user:last_user])
        lo[first_user:last_user] = np.quantile(reps, alpha, axis=0)
        hi[first_user:last_user] = np.quantile(reps, 1 - alpha, axis=0)
    return lo, hi


@dataclass(frozen=True)
class OverfittingCheck:
    """Result of comparing an evaluation's RMSE with the magic barrier of the same users.

    Attributes
    ----------
    flagged : bool
        True when the RMSE over the common users is below their barrier.
    rmse, barrier : float
        User-weighted quadratic means ``sqrt(mean_u x_u^2)`` over the common users (or the
        plain figures when a single RMSE was given).
    users : DataFrame
        Per common user (index: original id): ``rmse``, ``barrier``, ``below`` (RMSE under
        the estimate) and ``below_ci`` (under the lower confidence bound, when known).
    n_users : int
        Users in both the evaluation and the barrier.
    message : str
    """

    flagged: bool
    rmse: float
    barrier: float
    users: pd.DataFrame
    n_users: int
    message: str

    def summary(self) -> dict[str, Any]:
        """JSON-ready figures."""
        return {
            "flagged": self.flagged,
            "rmse": self.rmse,
            "barrier": self.barrier,
            "n_users": self.n_users,
            "n_users_below": int(self.users["below"].sum()) if len(self.users) else 0,
            "message": self.message,
        }


def check_overfitting(
    rmse: float | pd.Series | Mapping[Any, float] | Any, barrier: MagicBarrier | pd.Series
) -> OverfittingCheck:
    """Flag an RMSE below the magic barrier of the same users (Said & Bellogín, UMUAI 2018: likely overfitting).

    Parameters
    ----------
    rmse
        A single RMSE (compared with the system barrier), per-user RMSEs (a Series or
        mapping keyed by original user id), or an evaluation result with a ``per_user``
        DataFrame holding an ``rmse`` column (user ids in a ``user`` column or the index).
    barrier
        A :class:`MagicBarrier` or per-user barriers keyed by original user id.

    Returns
    -------
    OverfittingCheck
        Whether the RMSE is below the barrier of the same users (``flagged``), the two
        figures compared and the per-user comparison.

    Examples
    --------
    >>> d = Interactions.from_arrays(["a"] * 4 + ["b"] * 2, [1, 1, 2, 2, 1, 1], [3, 5, 2, 2, 4, 4])
    >>> mb = magic_barrier(d, n_bootstrap=0)
    >>> check = check_overfitting({"a": 0.5, "b": 0.9}, mb)
    >>> check.flagged, check.users["below"].to_dict()
    (False, {'a': True, 'b': False})
    >>> check_overfitting(0.3, mb).flagged
    True
    """
    import pandas as pd

    if isinstance(barrier, MagicBarrier):
        b_users = barrier.users["barrier"]
        ci_low = barrier.users["ci_low"]
        b_system: float | None = barrier.system
    else:
        b_users = pd.Series(barrier, dtype=float)
        ci_low = pd.Series(np.nan, index=b_users.index)
        b_system = None
    if isinstance(rmse, numbers.Real):  # Python and NumPy numbers
        value = float(rmse)
        if b_system is None:
            b_system = float(np.sqrt(np.mean(b_users.to_numpy() ** 2)))
        flagged = value < b_system
        msg = (
            f"RMSE {value:.4f} is below the magic barrier {b_system:.4f}: the model likely fits rating noise"
            if flagged
            else f"RMSE {value:.4f} is above the magic barrier {b_system:.4f}"
        )
        return OverfittingCheck(flagged, value, b_system, pd.DataFrame(), len(b_users), msg)
    per_user = _per_user_rmse(rmse)
    common = per_user.index.intersection(b_users.index)
    if len(common) == 0:
        raise DataError(
            "no user is both in the evaluation and in the magic-barrier estimate; "
            "compare results for the same users (original user ids)"
        )
    table = pd.DataFrame({"rmse": per_user.loc[common], "barrier": b_users.loc[common]})
    table["below"] = table["rmse"] < table["barrier"]
    table["below_ci"] = table["rmse"] < ci_low.loc[common]
    r = float(np.sqrt(np.mean(table["rmse"].to_numpy() ** 2)))
    b = float(np.sqrt(np.mean(table["barrier"].to_numpy() ** 2)))
    flagged = r < b
    n_below = int(table["below"].sum())
    msg = (
        f"RMSE {r:.4f} over {len(common)} users is below their magic barrier {b:.4f}: "
        f"the model likely fits rating noise ({n_below} users individually below)"
        if flagged
        else f"RMSE {r:.4f} over {len(common)} users is above their magic barrier {b:.4f} "
        f"({n_below} users individually below)"
    )
    return OverfittingCheck(flagged, r, b, table, len(common), msg)


def _per_user_rmse(rmse: Any) -> pd.Series:
    import pandas as pd

    per_user = getattr(rmse, "per_user", None)
    if isinstance(per_user, pd.DataFrame):
        col = next((c for c in per_user.columns if str(c).lower() == "rmse"), None)
        if col is None:
            raise DataError(
                f"the evaluation result has no per-user 'rmse' column (columns: {list(per_user.columns)}); "
                "evaluate with metrics including 'rmse'"
            )
        frame = per_user.set_index("user") if "user" in per_user.columns else per_user
        series = frame[col]
    elif isinstance(rmse, pd.Series | Mapping):
        series = pd.Series(rmse)
    else:
        raise DataError(
            f"cannot read per-user RMSE from {type(rmse).__name__}; give a float, a Series or mapping "
            "keyed by user id, or an evaluation result with a per_user table"
        )
    series = series.astype(float)
    if series.isna().any():
        n = int(series.isna().sum())
        series = series.dropna()
        if series.empty:
            raise DataError(f"all {n} per-user RMSE values are missing")
    return series
