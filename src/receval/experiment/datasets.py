"""Obtaining a configuration's data sets: load or generate, then filter.

Examples
--------
>>> from receval.experiment.config import DatasetSpec
>>> ds = prepare_dataset(DatasetSpec("toy", generate={"n_users": 30, "n_items": 20, "n_ratings": 200, "seed": 3}))
>>> ds.data.n_ratings
200
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from receval.data.interactions import Interactions
from receval.errors import ConfigError
from receval.experiment.config import DatasetSpec, ExperimentConfig
from receval.experiment.ids import content_hash
from receval.experiment.protocols import PreparedDataset

__all__ = ["prepare_dataset", "apply_filters", "given_test_file", "input_hashes"]


def prepare_dataset(spec: DatasetSpec, *, user_features: bool = False) -> PreparedDataset:
    """Load (a known ``name``, or ``path`` + ``format``) or generate the data set, apply its filters.

    ``user_features=True`` also loads the demographics file the format ships
    (MovieLens 100K/1M), needed by demographic slices.

    Returns
    -------
    PreparedDataset
        The interactions after the filters, and the user features when asked for.

    Examples
    --------
    >>> from receval.experiment.config import DatasetSpec
    >>> spec = DatasetSpec("toy", generate={"n_users": 30, "n_items": 20, "n_ratings": 200, "seed": 1},
    ...                    filters={"min_user_ratings": 5})
    >>> prepared = prepare_dataset(spec)
    >>> prepared.data.n_users <= 30, bool((prepared.data.to_frame()["user"].value_counts() >= 5).all())
    (True, True)
    """
    if spec.generate is not None:
        from receval.data.synthetic import generate

        try:
            data = generate(**dict(spec.generate))
        except TypeError as err:
            raise ConfigError(f"datasets.{spec.label}.generate: {err}") from None
    else:
        from receval.data import load

        data = load(_path(spec), spec.format, **dict(spec.options))
    data = apply_filters(data, spec.filters, label=spec.label)
    features = None
    if user_features:
        if spec.generate is not None:
            raise ConfigError(f"demographic slices need user features, but data set {spec.label!r} is generated")
        from receval.data import load_user_features

        features = load_user_features(_path(spec), spec.format)
    return PreparedDataset(data=data, user_features=features)


def _path(spec: DatasetSpec) -> str:
    """The folder of a known data set (downloaded and verified once) or the given path."""
    if spec.name is not None:
        from receval.data.registry import fetch

        return str(fetch(spec.name))
    return str(spec.resolved_path)


def given_test_file(cfg: ExperimentConfig, label: str) -> Path | None:
    """The ``[tune]`` section's given test file for data set ``label``, resolved against the data set's folder.

    Returns
    -------
    pathlib.Path or None
        None when the test part is split from the data (no ``test_path``).

    Examples
    --------
    >>> from receval.experiment.config import parse_config
    >>> text = 'metrics = ["ndcg@10"]\\n[datasets.ml]\\npath = "u1.base"\\nformat = "movielens-100k"\\n'
    >>> text += '[tune]\\ntrials = 1\\ntest_path = "u1.test"\\n[recommenders.popularity]\\n'
    >>> text += 'space = { threshold = { float = [1, 5] } }\\n'
    >>> given_test_file(parse_config(text, path="/data/ml/exp.toml"), "ml").as_posix()
    '/data/ml/u1.test'
    """
    given = None if cfg.tune is None else cfg.tune.test_path
    if given is None:
        return None
    spec = cfg.datasets[label]
    return Path(given) if Path(given).is_absolute() else Path(spec.base or "") / given


def input_hashes(cfg: ExperimentConfig) -> dict[str, dict[str, str]]:
    """The content hash (:func:`~receval.experiment.ids.content_hash`) of every file a configuration reads.

    ``{"datasets": {label: hash}, "test_path": {label: hash}, "groups": {path: hash}}``,
    each part only when it has an entry: a data set read from a ``path`` (a known ``name``
    is verified against its published checksums when fetched, a generated one is its
    recipe), the ``[tune]`` section's test file and the ``groups`` file. With the
    configuration's hash it is a run's identity: the same configuration over changed data
    is not the same work.

    Returns
    -------
    dict
        Empty for a configuration of generated data.

    Examples
    --------
    >>> import tempfile
    >>> from receval.experiment.config import parse_config
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "r.csv").write_text("user,item,rating\\n1,1,5\\n")
    >>> text = f'metrics = ["ndcg@10"]\\n[datasets.d]\\npath = "{folder.as_posix()}/r.csv"\\nformat = "csv"\\n'
    >>> cfg = parse_config(text + "[recommenders.popularity]\\n")
    >>> input_hashes(cfg) == {"datasets": {"d": content_hash(folder / "r.csv")}}
    True
    """
    out: dict[str, dict[str, str]] = {}
    for label, spec in cfg.datasets.items():
        for part, path in (
            ("datasets", spec.resolved_path if spec.name is None else None),
            ("test_path", given_test_file(cfg, label)),
        ):
            digest = None if path is None else content_hash(path)
            if digest is not None:
                out.setdefault(part, {})[label] = digest
    if cfg.groups is not None:  # the groups change every gap: a changed file is other work
        digest = content_hash(cfg.groups.resolved_path)
        if digest is not None:
            out["groups"] = {cfg.groups.path: digest}
    return out


def apply_filters(data: Interactions, filters: Mapping[str, Any], *, label: str = "") -> Interactions:
    """The configuration's ``filters`` applied by :func:`receval.data.prepare.prepare` (the one preparation path).

    Users and items left without a rating leave the id space, exactly as
    ``load(..., familiar_only=True)`` and ``receval simulate --familiar-only`` do.

    Returns
    -------
    Interactions
        The filtered data, over the ids that keep a rating.

    Examples
    --------
    >>> from receval import Interactions
    >>> d = Interactions.from_arrays([0, 0, 1], [0, 1, 1], [5, 4, 3], extra={"familiar": [True, False, True]})
    >>> apply_filters(d, {"familiar_only": True}).n_ratings
    2
    >>> apply_filters(d, {"min_item_ratings": 2}).n_ratings, apply_filters(d, {"min_item_ratings": 2}).n_items
    (2, 1)
    """
    from receval.data.prepare import prepare

    return prepare(data, **dict(filters), label=label)
