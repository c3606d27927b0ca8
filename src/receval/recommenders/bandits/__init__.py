"""Online (interactive) recommenders for the cyclic simulator.

The classes (:class:`ItemBandit`, :class:`KNNBandit`, and the kernel state behind
:class:`~receval.recommenders.baselines.Random`,
:class:`~receval.recommenders.baselines.MostPopular` and
:class:`~receval.recommenders.baselines.Average`) are built by name with
:func:`receval.recommenders.make`, the package's one registry, where presets
(``standard``, ``cyclorec``, ``thesis``) are parameter sets (:data:`PRESETS`).
:func:`make_online` is ``make`` restricted to the algorithms the simulator runs: those
its kernels drive (:data:`ONLINE_ALGORITHMS`) and the offline models it refits every
``refit_every`` rounds (:data:`OFFLINE_ALGORITHMS`). What tells the two apart is a
capability, :class:`KernelDriven`: a model with ``kernel_state()`` is driven by the
kernels, any other is refitted.

Examples
--------
>>> make_online("im-item-bandit-ts", preset="cyclorec")
ItemBandit(policy='thompson', epsilon=0.1, epsilon_decay=0.0, delta=1.0, delta_decay=0.0, pulls='all', alpha0=0.0, \
beta0=0.0, unknown='ignore', draw_offset=1.0, threshold=None, seed=0)
>>> make_online("item-bandit-ucb", preset="thesis").pulls
'feedback'
>>> make_online("item-bandit-egreedy", epsilon="0.2").epsilon
0.2
>>> make_online("biases")
Traceback (most recent call last):
...
receval.errors.ConfigError: unknown algorithm 'biases' for the cyclic simulation; known: random, popularity, \
average, item-bandit-egreedy, item-bandit-ucb, item-bandit-ts, im-item-bandit-egreedy, im-item-bandit-ucb, \
im-item-bandit-ts, knn-bandit, user-knn, item-knn, hkv
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from receval.errors import ConfigError
from receval.recommenders.bandits.item import ItemBandit
from receval.recommenders.bandits.knn import KNNBandit
from receval.recommenders.registry import PRESETS, make

__all__ = [
    "ItemBandit",
    "KNNBandit",
    "KernelDriven",
    "ONLINE_ALGORITHMS",
    "PRESETS",
    "OFFLINE_ALGORITHMS",
    "make_online",
]

ONLINE_ALGORITHMS: tuple[str, ...] = (
    "random",
    "popularity",
    "average",
    *(f"item-bandit-{k}" for k in ("egreedy", "ucb", "ts")),
    *(f"im-item-bandit-{k}" for k in ("egreedy", "ucb", "ts")),
    "knn-bandit",
)
OFFLINE_ALGORITHMS = ("user-knn", "item-knn", "hkv")


@runtime_checkable
class KernelDriven(Protocol):
    """A model the simulator's compiled loop drives (:mod:`receval.simulate._loop`): it learns between decisions.

    ``kernel_state()`` returns the arrays the kernels of
    :mod:`receval.recommenders.bandits._kernels` read and update in place: a tuple of
    equally typed arrays for the item policies, the kNN bandit's mixed tuple otherwise.
    A model without it is scored once and refitted every ``refit_every`` rounds.

    >>> isinstance(make_online("knn-bandit"), KernelDriven), isinstance(make_online("user-knn"), KernelDriven)
    (True, False)
    """

    def kernel_state(self) -> tuple[Any, ...]:
        """The fitted model's kernel arrays (mutated by the simulation)."""
        ...


def make_online(name: str, preset: str = "standard", **params: Any) -> Any:
    """An unfitted model for the cyclic simulator: :func:`receval.recommenders.make` with ``preset``.

    Only the names of :data:`ONLINE_ALGORITHMS` and :data:`OFFLINE_ALGORITHMS`;
    string parameter values (from the command line) are converted as ``make`` does.

    Returns
    -------
    object
        The unfitted model; an unknown name is a ConfigError listing the known ones.

    Examples
    --------
    >>> make_online("knn-bandit", preset="thesis", k="5").k
    5
    """
    if name not in ONLINE_ALGORITHMS and name not in OFFLINE_ALGORITHMS:
        known = ", ".join([*ONLINE_ALGORITHMS, *OFFLINE_ALGORITHMS])
        raise ConfigError(f"unknown algorithm {name!r} for the cyclic simulation; known: {known}")
    return make(name, preset=preset, **params)
