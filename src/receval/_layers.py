"""The order of receval's layers, written down once (``tests/test_layers.py`` enforces it).

A *unit* is a top-level module or package of ``receval`` (``errors``, ``data``,
``metrics``, ...); the root ``receval/__init__.py`` is the unit ``receval``, the façade
with the few names a user needs first. :data:`LAYERS` lists the units from the bottom
up. A module may import from its own unit and from units in lower layers only; units
that share a layer are siblings and never import each other (a metric never imports a
recommender, a recommender never imports a metric). Function-level imports and
imports by name through :func:`importlib.import_module` count like module-level ones,
and no two modules may import each other, directly or through others.

What each layer may use:

- ``errors`` — the exception family; ``progress`` — the progress callbacks; ``_jit`` —
  numba's ``njit`` deferred to a kernel's first call; nothing of receval.
- ``vocabulary`` — the names of receval's choices (split methods, library conventions,
  paired tests and corrections, cold-start policies); only ``errors``.
- ``atomic`` — the atomic writers; ``validate`` — the checks of options and
  configuration values (seeds, counts, thresholds, memory); ``outputs`` — the checks of
  output paths before any work; ``cold_start`` — the fallback list of users without
  training data; ``jsontext`` — the strict JSON text every command prints; all only ``errors`` and
  ``vocabulary``.
- ``data`` — :class:`~receval.data.interactions.Interactions`, loaders, synthetic data,
  data-set statistics.
- ``split`` — train/test splits of ``data``.
- ``recommenders`` and ``metrics`` — models fitted on ``data``; metric kernels over
  ranked lists. Siblings.
- ``stats`` — pure computations on arrays and ``data`` (significance, agreement, magic
  barrier, coherence); may read metric facts from ``metrics``.
- ``evaluation`` and ``simulate`` — one-shot evaluation of ranked lists (and its user-sharded form); the cyclic
  (interactive) loop over online recommenders. Siblings.
- ``studies`` — studies that fit models and call ``evaluation``/``simulate`` (attacks,
  freshness, partitions, metaeval, axioms, slicing).
- ``experiment`` — configurations, task grids, protocols, executors, the result store.
- ``report`` — every figure and table drawn for studies and experiments.
- ``receval`` — the package's own ``__init__``.
- ``cli`` — thin commands over all of the above; ``__main__`` — ``python -m receval``.

>>> layer_of("metrics") < layer_of("evaluation") < layer_of("report")
True
>>> layer_of("metrics") == layer_of("recommenders")
True
"""

from __future__ import annotations

__all__ = ["LAYERS", "layer_of"]

LAYERS: tuple[tuple[str, ...], ...] = (
    ("_layers", "errors", "progress", "_jit"),
    ("vocabulary",),
    ("atomic", "validate", "outputs", "cold_start", "jsontext"),
    ("data",),
    ("split",),
    ("recommenders", "metrics"),
    ("stats",),
    ("evaluation", "simulate"),
    ("studies",),
    ("experiment",),
    ("report",),
    ("receval",),
    ("cli",),
    ("__main__",),
)


def layer_of(unit: str) -> int:
    """The index in :data:`LAYERS` of ``unit`` (``KeyError`` for a unit in no layer).

    >>> layer_of("errors"), layer_of("__main__") == len(LAYERS) - 1
    (0, True)
    """
    for index, units in enumerate(LAYERS):
        if unit in units:
            return index
    raise KeyError(f"receval unit {unit!r} is in no layer of receval._layers.LAYERS; add it there")
