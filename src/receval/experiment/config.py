"""Experiment configurations in TOML: schema, validation with line numbers, ``--quick`` overrides.

A configuration names the data sets, the split, the recommenders with their parameter
grids, the protocol, the metrics, the seeds, the slices and the output directory::

    name = "quickstart"
    seeds = [0, 1]                      # or a count: seeds = 5 means 0..4
    metrics = ["ndcg@10", "precision@10"]
    convention = "trec_eval"            # optional: a library's preset for every metric (receval run --convention)
    output = "results/quickstart"       # optional; --out overrides it

    [datasets.toy]
    generate = { n_users = 200, n_items = 300, seed = 1 }   # or name = "ml-100k", or path + format
    threshold = 4                       # optional: this data set's relevance threshold λ

    [split]
    method = "holdout"                  # a name of receval.vocabulary (as `receval split --method`)
    test_fraction = 0.2

    [protocol]
    name = "one-shot"
    k = 10

    [recommenders.pop]                  # a label; algorithm defaults to the label
    algorithm = "popularity"
    params = { threshold = [3, 4] }     # a list is a grid axis

    [groups]                            # optional, one-shot: every metric's gap between user groups
    path = "user_groups.csv"            # user,group (or groups = "user_groups.csv")
    unknown_group = "other"             # optional: pools the data's users without a group (else an error)
    test = "welch"                      # or mannwhitney, permutation

    [quick]                             # merged over the rest with --quick
    seeds = [0]

Errors are :class:`~receval.errors.ConfigError` with the file and line of the offending
key (``tomllib`` reports no positions, so the key is located in the text).

Examples
--------
>>> text = '''
... seeds = 2
... metrics = ["ndcg@10"]
... [datasets.toy]
... generate = { n_users = 50, n_items = 40 }
... [protocol]
... name = "one-shot"
... [recommenders.random]
... params = { seed = [0, 1] }
... '''
>>> cfg = parse_config(text, path="demo.toml")
>>> cfg.seeds, cfg.recommenders["random"].algorithm, cfg.protocol.name
(range(0, 2), 'random', 'one-shot')
>>> parse_config(text.replace("seeds", "sedes"), path="demo.toml")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
receval.errors.ConfigError: demo.toml, line 2: unknown key 'sedes' at the top level; valid keys: convention, ...
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from receval.data.prepare import FILTERS
from receval.errors import ConfigError, ReceValError, did_you_mean
from receval.experiment.ids import stable_hash
from receval.experiment.protocols import get_protocol, protocol_names
from receval.outputs import safe_name
from receval.recommenders.space import SPACE_KEYS, ParamRange, parse_range
from receval.validate import (
    check_count,
    check_number,
    check_option,
    check_seed,
    first_repeat,
    parse_duration,
    parse_instant,
)
from receval.vocabulary import NO_SPLIT, SPLIT_COMMON, UnpairedTest, split_candidates, split_method, split_targets

__all__ = [
    "DatasetSpec",
    "ExperimentConfig",
    "GroupsSpec",
    "ProtocolSpec",
    "RecommenderSpec",
    "load_config",
    "parse_config",
]

SLICE_DIMENSIONS = ("user", "item", "time")

_TOP = {
    "name": str,
    "output": str,
    "seeds": (list, int),
    "metrics": list,
    "convention": str,
    "datasets": dict,
    "split": dict,
    "protocol": dict,
    "recommenders": dict,
    "slices": dict,
    "tune": dict,
    "groups": (str, dict),
    "quick": dict,
}
_GROUPS = {"path": str, "unknown_group": str, "test": str}
_DATASET = {
    "name": str,
    "path": str,
    "format": str,
    "options": dict,
    "filters": dict,
    "generate": dict,
    "threshold": float,
}
_RECOMMENDER = {"algorithm": str, "params": dict, "space": dict, "trials": int, "seconds": float}
_TUNE = {
    "metric": str,
    "sampler": str,
    "trials": int,
    "seconds": float,
    "seed": int,
    "refit": str,
    "storage": str,
    "parallel": int,
    "test_path": str,
    "validation": dict,
    "default_candidate": bool,
}
GRID_POINTS = 1_000_000
"""The most points a grid search may list (Optuna keeps every combination of the grid in memory)."""
STORAGE_SCHEMES = ("sqlite", "postgresql", "mysql", "mariadb", "oracle", "mssql")
"""The databases a ``[tune] storage`` URL may name (SQLAlchemy's dialects, through which Optuna stores studies)."""
SAMPLERS = ("tpe", "random", "grid")
"""Optuna's samplers a ``[tune]`` section may name: TPE (the default), random search, grid search."""
REFITS = ("train+validation", "train")
"""What the chosen parameters are refitted on before the one test evaluation (``[tune] refit``)."""
_TOML_TYPES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    list: "an array",
    dict: "a table",
}


# ------------------------------------------------------------------ locations
class _Locator:
    """Finds the line of a dotted key path in TOML text (tables, dotted keys, inline tables)."""

    _HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
    _KEY = re.compile(
        r"""(?:^|[{,])\s*((?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_\-]+|"[^"]*"|'[^']*'))*)\s*="""
    )

    def __init__(self, text: str) -> None:
        self.lines: dict[tuple[str, ...], int] = {}
        prefix: tuple[str, ...] = ()
        for number, line in enumerate(text.splitlines(), start=1):
            head = self._HEADER.match(line)
            if head:
                prefix = self._split(head.group(1))
                self.lines.setdefault(prefix, number)
                continue
            self._scan(line, prefix, number)

    @staticmethod
    def _split(dotted: str) -> tuple[str, ...]:
        return tuple(
            part.strip().strip("\"'") for part in re.split(r"\.(?=(?:[^\"']*[\"'][^\"']*[\"'])*[^\"']*$)", dotted)
        )

    def _scan(self, line: str, prefix: tuple[str, ...], number: int) -> None:
        # keys of inline tables nest under the key that opens them
        stack = [prefix]
        pos = 0
        code = line.split("#", 1)[0] if '"' not in line and "'" not in line else line
        while pos < len(code):
            m = self._KEY.search(code, pos)
            if m is None:
                break
            opened = code.count("{", 0, m.start(1)) - code.count("}", 0, m.start(1))
            while len(stack) > opened + 1:
                stack.pop()
            path = stack[-1] + self._split(m.group(1))
            self.lines.setdefault(path, number)
            after = code[m.end() :].lstrip()
            if after.startswith("{"):
                stack.append(path)
            pos = m.end()

    def line(self, path: tuple[str, ...]) -> int | None:
        """Line of ``path``, else of its closest parent that was seen."""
        for cut in range(len(path), 0, -1):
            if path[:cut] in self.lines:
                return self.lines[path[:cut]]
        return None


# ------------------------------------------------------------------ specs
@dataclass(frozen=True)
class DatasetSpec:
    """How to obtain one data set: a known ``name`` (downloaded once), ``path`` + ``format``, or ``generate``."""

    label: str
    name: str | None = None
    path: str | None = None
    format: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    filters: Mapping[str, Any] = field(default_factory=dict)
    generate: Mapping[str, Any] | None = None
    threshold: float | None = None
    # The folder a relative ``path`` is resolved against (the config file's folder). Not part
    # of the data set's identity: the same config names the same data on every machine.
    base: str | None = field(default=None, compare=False)

    @property
    def resolved_path(self) -> str | None:
        """``path`` resolved against the config file's folder when it is relative."""
        if self.path is None or self.base is None or Path(self.path).is_absolute():
            return self.path
        return str(Path(self.base) / self.path)

    def as_dict(self) -> dict[str, Any]:
        """The JSON-able description (part of every task id that uses this data set)."""
        return {
            "label": self.label,
            "name": self.name,
            "path": self.path,
            "format": self.format,
            "options": dict(self.options),
            "filters": dict(self.filters),
            "generate": None if self.generate is None else dict(self.generate),
            "threshold": self.threshold,
        }

    @property
    def key(self) -> str:
        """Short hash identifying the data set's content recipe."""
        return stable_hash(self.as_dict(), 12)


@dataclass(frozen=True)
class RecommenderSpec:
    """One recommender entry: algorithm name and parameters (lists are grid axes).

    ``space`` is the search space ``[tune]`` explores (the ``params`` stay fixed), and
    ``trials``/``seconds`` this recommender's own budget when it differs from ``[tune]``'s.
    """

    label: str
    algorithm: str
    params: Mapping[str, Any] = field(default_factory=dict)
    space: tuple[ParamRange, ...] = ()
    trials: int | None = None
    seconds: float | None = None


@dataclass(frozen=True)
class TuneSpec:
    """A ``[tune]`` section: the objective, the sampler, the budget, the validation split, the refit and storage."""

    metric: str
    direction: str
    sampler: str = "tpe"
    trials: int | None = None
    seconds: float | None = None
    seed: int = 0
    refit: str = "train+validation"
    storage: str | None = None
    parallel: int = 1
    test_path: str | None = None
    validation: Mapping[str, Any] = field(default_factory=dict)
    default_candidate: bool = True
    """The untuned defaults compete on validation: chosen when better than every trial (outside the budget)."""

    def budget(self, rec: RecommenderSpec) -> tuple[int | None, float | None]:
        """``(trials, seconds)`` for ``rec``: its own budget where it sets one, else the section's."""
        if rec.trials is None and rec.seconds is None:
            return self.trials, self.seconds
        return rec.trials, rec.seconds


@dataclass(frozen=True)
class GroupsSpec:
    """The ``groups`` of a configuration: a ``user, group`` file, the group pooling users without one, the test.

    Every one-shot task stores each metric's gap between the groups (``groups.parquet``:
    :func:`receval.stats.groups.group_gaps_frame`), as ``receval evaluate --user-groups FILE
    --unknown-group NAME --group-test TEST`` prints it.
    """

    path: str
    unknown_group: str | None = None
    test: UnpairedTest = "welch"
    base: str | None = field(default=None, compare=False)  # the config file's folder, as DatasetSpec.base

    @property
    def resolved_path(self) -> Path:
        """``path`` resolved against the config file's folder when it is relative."""
        path = Path(self.path)
        return path if path.is_absolute() or self.base is None else Path(self.base) / path


@dataclass(frozen=True)
class ProtocolSpec:
    """The protocol name and its options (lists are grid axes)."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExperimentConfig:
    """A validated experiment configuration (after ``--quick`` overrides, if any)."""

    name: str
    datasets: Mapping[str, DatasetSpec]
    split: Mapping[str, Any]
    protocol: ProtocolSpec
    recommenders: Mapping[str, RecommenderSpec]
    metrics: tuple[str, ...]
    seeds: Sequence[int]
    """The seeds: a tuple when listed, a ``range`` when counted (``seeds = 10**8`` is refused by the grid's
    memory check, not built first)."""
    slices: Mapping[str, tuple[str, ...]]
    output: str | None
    source: str
    effective: Mapping[str, Any]
    convention: str | None = None
    """The library preset applied to every metric (``convention = "NAME"``; its canonical name), or None."""
    tune: TuneSpec | None = None
    """The ``[tune]`` section: every recommender is tuned on validation data and evaluated once on test."""
    groups: GroupsSpec | None = None
    """The user groups whose gaps every one-shot task computes (``groups``), or None."""

    @property
    def output_dir(self) -> Path:
        """Where the results go when no ``out=`` is given: ``output``, else ``results/<name>``.

        The name becomes one file name (:func:`~receval.outputs.safe_name`), so a
        ``name = "../../x"`` cannot move the store out of ``results/``.

        >>> text = 'name = "../../x"\\nmetrics = ["ndcg@10"]\\n'
        >>> text += '[datasets.toy]\\ngenerate = { n_users = 50, n_items = 40 }\\n'
        >>> parse_config(text + "[recommenders.random]\\n").output_dir.as_posix()
        'results/_._.._x+9cdf6a50'
        """
        return Path(self.output) if self.output else Path("results") / safe_name(self.name)

    @property
    def hash(self) -> str:
        """Hash of the effective configuration without ``output`` (the store's identity)."""
        body = {k: v for k, v in self.effective.items() if k not in ("output", "quick")}
        return stable_hash(body)


# ------------------------------------------------------------------ parsing
def load_config(path: str | Path, *, quick: bool = False, convention: str | None = None) -> ExperimentConfig:
    """Read and validate a TOML experiment configuration file (UTF-8 text; a leading byte-order mark is allowed).

    ``convention`` sets the library preset over the file's ``convention`` (``receval run --convention``).

    A file that is not text (compressed, binary, another encoding) is a ConfigError
    naming the file and the line of the first byte that is not UTF-8.

    >>> import tempfile
    >>> p = Path(tempfile.mkdtemp()) / "exp.toml"
    >>> _ = p.write_bytes(b'name = "x"\\nseeds = \\x8b\\n')
    >>> load_config(p)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: .../exp.toml, line 2: the configuration is not UTF-8 text (byte 9 of the line ...
    """
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"configuration file {str(p)!r} does not exist")
    return parse_config(_config_text(p), path=str(p), quick=quick, convention=convention)


def _config_text(path: Path) -> str:
    """A configuration file's text (the one decoding of it, which the checks that locate keys read too)."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        start = raw.rfind(b"\n", 0, err.start) + 1
        raise ConfigError(
            f"the configuration is not UTF-8 text (byte {err.start - start + 1} of the line is "
            f"\\x{raw[err.start]:02x}); a configuration is a TOML text file: give that, saved as UTF-8",
            path=path,
            line=raw.count(b"\n", 0, err.start) + 1,
        ) from None


def _merge(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


class _Checker:
    def __init__(self, text: str, path: str) -> None:
        self.loc = _Locator(text)
        self.path = path

    def fail(self, where: tuple[str, ...], message: str) -> ConfigError:
        return ConfigError(message, path=self.path, line=self.loc.line(where))

    def keys(self, table: Mapping[str, Any], schema: Mapping[str, Any], where: tuple[str, ...], what: str) -> None:
        for key, value in table.items():
            if key not in schema:
                raise self.fail((*where, key), f"unknown key {key!r} {what}; valid keys: {', '.join(sorted(schema))}"
                                + did_you_mean(key, schema, n=1))  # fmt: skip
            self.type(value, schema[key], (*where, key))

    def value(self, check: Any, *args: Any, where: tuple[str, ...], **kwargs: Any) -> Any:
        """``check(*args, **kwargs)`` of :mod:`receval.validate`, its ConfigError given this file and line."""
        try:
            return check(*args, **kwargs)
        except ConfigError as err:
            raise self.fail(where, err.message) from None

    def type(self, value: Any, types: Any, where: tuple[str, ...]) -> None:
        kinds = types if isinstance(types, tuple) else (types,)
        ok = any(
            isinstance(value, t) and not (t in (int, float) and isinstance(value, bool))
            for t in (*kinds, *((int,) if float in kinds else ()))
        )
        if not ok:
            want = " or ".join(_TOML_TYPES.get(t, t.__name__) for t in kinds)
            raise self.fail(where, f"'{'.'.join(where)}' must be {want}, got {value!r}")


def parse_config(
    text: str, *, path: str = "<config>", quick: bool = False, convention: str | None = None
) -> ExperimentConfig:
    """Validate configuration text; see the module docstring for the layout.

    ``convention`` (a library's name) replaces the text's ``convention``. The preset is
    applied to the metric strings here, so every evaluation of the run computes the
    resolved metrics (``metrics`` holds them: ``recall@10(denominator=min)`` for
    LensKit's recall@10) and the effective configuration, stored with the results,
    names the preset.

    >>> text = 'metrics = ["recall@10"]\\nconvention = "LensKit"\\n[datasets.toy]\\ngenerate = { n_users = 9 }\\n'
    >>> cfg = parse_config(text + "[recommenders.random]\\n")
    >>> cfg.metrics, cfg.convention, parse_config(text + "[recommenders.random]\\n", convention="ranx").metrics
    (('recall@10(denominator=min)',), 'lenskit', ('recall@10',))
    """
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        line = re.search(r"line (\d+)", str(err))
        raise ConfigError(f"not valid TOML: {err}", path=path, line=int(line.group(1)) if line else None) from None
    chk = _Checker(text, path)
    chk.keys(raw, _TOP, (), "at the top level")
    if quick and "quick" in raw:
        quick_table = raw["quick"]
        if "quick" in quick_table or "output" in quick_table:
            raise chk.fail(("quick",), "[quick] may not set 'quick' or 'output'")
        chk.keys(quick_table, _TOP, ("quick",), "in [quick]")
        raw = _merge(raw, quick_table)
    effective = {k: v for k, v in raw.items() if k != "quick"}
    preset = None
    if convention is not None:  # given on the command line: checked as an option, not as a line of the file
        from receval.evaluation import check_convention

        preset = check_convention(convention)
        effective["convention"] = preset
    elif "convention" in effective:
        from receval.evaluation import check_convention

        preset = chk.value(check_convention, effective["convention"], where=("convention",))
        effective["convention"] = preset  # one spelling: "LensKit" and "lenskit" are one configuration

    name = effective.get("name", Path(path).stem)
    seeds_raw = effective.get("seeds", [0])
    if isinstance(seeds_raw, int):
        if seeds_raw < 1:
            raise chk.fail(("seeds",), f"seeds = {seeds_raw}: give a positive count or a list of integers")
        seeds: Sequence[int] = range(seeds_raw)  # not a tuple: 10^8 seeds took 20 s and GBs before the refusal
    else:
        if not seeds_raw:  # no task would run: refused here, so that `receval check` says what `run` would
            raise chk.fail(("seeds",), "seeds = []: give at least one seed (or a count: seeds = 3 means 0, 1, 2)")
        for s in seeds_raw:
            chk.type(s, int, ("seeds",))
            chk.value(check_seed, s, "seeds", where=("seeds",))
        seeds = tuple(seeds_raw)
        _distinct_axis(chk, seeds_raw, ("seeds",), "seeds")

    datasets = _datasets(chk, effective.get("datasets", {}))
    split = _split(chk, effective.get("split", {"method": "holdout"}))
    protocol = _protocol(chk, effective.get("protocol", {"name": "one-shot"}))
    proto = get_protocol(protocol.name)
    recommenders = _recommenders(chk, effective.get("recommenders", {}), proto, protocol.options)
    metrics = _metrics(chk, effective.get("metrics", []), proto, preset)
    _depth(chk, protocol, proto, metrics)
    slices = _slices(chk, effective.get("slices", {}))
    groups = _groups(chk, effective["groups"], proto.name, "tune" in effective) if "groups" in effective else None
    tune = None
    if "tune" in effective:
        tune, recommenders = _tune(chk, effective, split, recommenders, metrics, proto, seeds[0])
    else:
        for label in recommenders:
            for key in ("space", "trials", "seconds"):
                if key in effective["recommenders"][label]:
                    raise chk.fail(("recommenders", label, key), f"[recommenders.{label}] {key} needs a [tune] section")
    cfg = ExperimentConfig(
        name=str(name),
        datasets=datasets,
        split=split,
        protocol=protocol,
        recommenders=recommenders,
        metrics=metrics,
        seeds=seeds,
        slices=slices,
        output=effective.get("output"),
        source=path,
        effective=effective,
        convention=preset,
        tune=tune,
        groups=groups,
    )
    try:
        proto.validate(cfg)
    except ConfigError as err:
        if err.path is None:
            raise chk.fail(("protocol",), err.message) from None
        raise
    except ReceValError as err:
        raise chk.fail(("protocol",), str(err)) from None
    return cfg


def _check_label(chk: _Checker, where: tuple[str, str]) -> None:
    """A table's label names its rows in every result: '' vanished from them ('/popularity()') and 'pop ' looked like
    'pop'."""
    label = where[1]
    if not label.strip() or label != label.strip():
        raise chk.fail(where, f"[{where[0]}.{label!r}]: a label names the results, so give one without blanks at "
                       f"its ends (e.g. {label.strip() or 'mine'!r})")  # fmt: skip


def _datasets(chk: _Checker, table: Mapping[str, Any]) -> dict[str, DatasetSpec]:
    out = {}
    for label, entry in table.items():
        where = ("datasets", label)
        _check_label(chk, where)
        chk.type(entry, dict, where)
        chk.keys(entry, _DATASET, where, f"in [datasets.{label}]")
        if sum(key in entry for key in ("name", "path", "generate")) != 1:
            raise chk.fail(
                where,
                f"[datasets.{label}] needs exactly one of 'name' (a known data set), 'path' (with 'format') "
                "or 'generate'",
            )
        fmt = entry.get("format")
        if "name" in entry:
            from receval.data.registry import DATASETS

            if entry["name"] not in DATASETS:
                raise chk.fail(
                    (*where, "name"), f"unknown data set name {entry['name']!r}; known: {', '.join(DATASETS)}"
                )
            fmt = fmt or DATASETS[entry["name"]].format
        if "path" in entry and "format" not in entry:
            raise chk.fail(where, f"[datasets.{label}] has a path but no 'format' (e.g. format = \"movielens-100k\")")
        filters = entry.get("filters", {})
        chk.keys(filters, FILTERS, (*where, "filters"), f"in datasets.{label}.filters")
        for key in ("min_user_ratings", "min_item_ratings"):
            if filters.get(key, 0) < 0:
                raise chk.fail((*where, "filters", key), f"{key} must be >= 0")
        if "threshold" in entry:
            chk.value(check_number, entry["threshold"], f"datasets.{label}.threshold", where=(*where, "threshold"))
        out[label] = DatasetSpec(
            label=label,
            name=entry.get("name"),
            path=entry.get("path"),
            format=fmt,
            options=dict(entry.get("options", {})),
            filters=dict(filters),
            generate=None if "generate" not in entry else dict(entry["generate"]),
            threshold=None if "threshold" not in entry else float(entry["threshold"]),
            base=None if chk.path.startswith("<") else str(Path(chk.path).resolve().parent),
        )
    return out


def _split(chk: _Checker, table: Mapping[str, Any]) -> dict[str, Any]:
    return _split_table(chk, table, ("split",), "split")


def _split_word(check: Any) -> Any:
    """A vocabulary check with the option shown as the configuration writes it."""

    def checked(value: Any, option: str) -> Any:
        try:
            return check(value)
        except ConfigError as err:
            raise ConfigError(f"{option}: {err.message}") from None

    return checked


_SPLIT_CHECKS: dict[str, Any] = {  # the time options of a split, checked as the command line checks them
    "at": parse_instant,
    "windows": check_count,
    "window": lambda value, option: parse_duration(value, option, fraction=True),
    "gap": parse_duration,
    "core": check_count,
    "targets": _split_word(split_targets),
    "candidates": _split_word(split_candidates),
}


def _split_table(chk: _Checker, table: Mapping[str, Any], where: tuple[str, ...], shown: str) -> dict[str, Any]:
    """A split method and its options (``[split]``, ``[tune.validation]``)."""
    chk.type(table, dict, where)
    method = table.get("method", "holdout")
    chk.type(method, str, (*where, "method"))
    try:
        accepted = [] if method == NO_SPLIT else [*split_method(method).options, *SPLIT_COMMON]
    except ConfigError as err:
        raise chk.fail((*where, "method"), f"{err.message} (or {NO_SPLIT})") from None
    if where != ("split",) and (method == NO_SPLIT or split_method(method).folds):
        raise chk.fail((*where, "method"), f"{shown} carves one validation part: {method!r} does not")
    for key, value in table.items():
        if key != "method":
            chk.type(value, (str, int, float, bool), (*where, key))
            if key not in accepted:
                valid = ", ".join(["method", *accepted])
                raise chk.fail((*where, key), f"unknown key {key!r} of split method {method!r}; valid keys: {valid}")
            if key == "k" and split_method(method).folds:
                chk.value(check_count, value, f"{shown}.k", minimum=2, where=(*where, key))
            elif key in _SPLIT_CHECKS:
                chk.value(_SPLIT_CHECKS[key], value, f"{shown}.{key}", where=(*where, key))
            else:
                chk.value(check_option, key, value, f"{shown}.{key}", where=(*where, key))
    return dict(table, method=method)


def _protocol(chk: _Checker, table: Mapping[str, Any]) -> ProtocolSpec:
    chk.type(table, dict, ("protocol",))
    name = table.get("name")
    if name is None:
        raise chk.fail(("protocol",), f"[protocol] needs a name; one of {', '.join(protocol_names())}")
    chk.type(name, str, ("protocol", "name"))
    try:
        proto = get_protocol(name)
    except ConfigError as err:
        raise chk.fail(("protocol", "name"), err.message) from None
    options = {k: v for k, v in table.items() if k != "name"}
    for key, value in options.items():
        if key not in proto.options:
            raise chk.fail(
                ("protocol", key),
                f"unknown option {key!r} of protocol {name!r}; valid: {', '.join(sorted(proto.options)) or 'none'}"
                + did_you_mean(key, proto.options),
            )
        kind = proto.options[key][0]
        for v in value if isinstance(value, list) and kind is not list else [value]:
            chk.type(v, kind, ("protocol", key))
            if kind is not list:
                chk.value(check_option, key, v, f"protocol.{key}", where=("protocol", key))
        if isinstance(value, list) and kind is not list and not value:
            raise chk.fail(("protocol", key), f"protocol option {key!r} is an empty grid: the grid has zero tasks")
        if isinstance(value, list) and kind is not list:
            _distinct_axis(chk, value, ("protocol", key), f"protocol option {key!r}")
    if proto.check is not None:  # the protocol's own rules, on every point of the option grid
        axes = {k: v for k, v in options.items() if isinstance(v, list) and proto.options[k][0] is not list}
        for point in itertools.product(*axes.values()):
            try:
                proto.check(proto.defaults() | options | dict(zip(axes, point, strict=True)))
            except ConfigError as err:
                named = [p for p in err.parameters if p in options]
                raise chk.fail(("protocol", *named[:1]), err.message) from None
    return ProtocolSpec(name=name, options=options)


def _distinct_axis(chk: _Checker, values: list[Any], where: tuple[str, ...], shown: str) -> None:
    """Refuse a grid axis that lists a value twice: each task of that value would run twice (under two ids when
    they are written differently, 10 and 10.0).

    >>> _distinct_axis(_Checker("k = [10, 10]", "exp.toml"), [10, 10], ("k",), "protocol option 'k'")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: exp.toml, line 1: protocol option 'k' lists 10 twice ([10, 10]): the grid would ...
    """
    j = first_repeat(values)
    if j is not None:
        listed = json.dumps(values, default=str)
        raise chk.fail(where, f"{shown} lists {json.dumps(values[j], default=str)} twice ({listed}): the grid would "
                       "run the same tasks twice; list each value once")  # fmt: skip


def _recommenders(
    chk: _Checker, table: Mapping[str, Any], proto: Any, options: Mapping[str, Any]
) -> dict[str, RecommenderSpec]:
    out = {}
    for label, entry in table.items():
        where = ("recommenders", label)
        _check_label(chk, where)
        chk.type(entry, dict, where)
        chk.keys(entry, _RECOMMENDER, where, f"in [recommenders.{label}]")
        algorithm = entry.get("algorithm", label)
        params = dict(entry.get("params", {}))
        for key, value in params.items():
            if isinstance(value, list) and not value:
                raise chk.fail((*where, "params", key), f"parameter {key!r} is an empty grid: the grid has zero tasks")
            if isinstance(value, list):
                _distinct_axis(chk, value, (*where, "params", key), f"[recommenders.{label}] parameter {key!r}")
        if proto.factory is not None:
            _check_params(chk, where, "algorithm" in entry, algorithm, params, proto, options)
        out[label] = RecommenderSpec(label=label, algorithm=algorithm, params=params)
    return out


def _check_params(
    chk: _Checker,
    where: tuple[str, ...],
    explicit: bool,
    algorithm: str,
    params: Mapping[str, Any],
    proto: Any,
    options: Mapping[str, Any],
) -> None:
    """Build the model for the first value of every axis: unknown names or parameters fail now."""
    first = {k: (v[0] if isinstance(v, list) else v) for k, v in params.items()}
    opts = proto.defaults() | {k: (v[0] if isinstance(v, list) else v) for k, v in options.items()}
    try:
        proto.factory(algorithm, first, opts)
    except ConfigError as err:
        if "unknown algorithm" in err.message:
            raise chk.fail(
                (*where, "algorithm") if explicit else where, f"[recommenders.{where[1]}]: {err.message}"
            ) from None
        bad = next((k for k in params if repr(k) in err.message or f"{k}=" in err.message), None)
        raise chk.fail((*where, "params", bad) if bad else where, err.message) from None
    except ImportError as err:  # the algorithm's module is not available in this installation
        raise chk.fail(where, f"algorithm {algorithm!r} cannot be loaded: {err}") from None
    except (TypeError, ValueError) as err:
        raise chk.fail((*where, "params"), f"bad parameters for {algorithm!r}: {err}") from None


def _depth(chk: _Checker, protocol: ProtocolSpec, proto: Any, metrics: tuple[str, ...]) -> None:
    """Each value of the protocol's list length ``k`` is at least every metric's cutoff (as evaluate_model asks)."""
    if "k" not in proto.options or proto.metric_names is not None or not metrics:
        return
    from receval.evaluation.oneshot import check_depth
    from receval.metrics import MetricList

    given = protocol.options.get("k", proto.defaults()["k"])
    for k in given if isinstance(given, list) else [given]:
        try:
            check_depth(MetricList(list(metrics)), int(k))
        except ConfigError as err:
            raise chk.fail(("protocol", "k") if "k" in protocol.options else ("metrics",), err.message) from None


def _metrics(chk: _Checker, values: list[Any], proto: Any, convention: str | None) -> tuple[str, ...]:
    """The metric strings, canonical and with the preset ``convention`` applied."""
    from receval.metrics import apply_convention

    if convention is not None and proto.metric_names is not None:
        raise chk.fail(
            ("convention",),
            f"protocol {proto.name!r} reports measures of its own, not metric strings: a library's convention "
            "does not apply to them; drop 'convention'",
        )
    out = []
    for value in values:
        chk.type(value, str, ("metrics",))
        if proto.metric_names is not None:
            known = list(proto.metric_names())
            if value not in known:
                raise chk.fail(("metrics",), f"protocol {proto.name!r} reports no metric {value!r}; known: {known}")
            out.append(value)
            continue
        try:
            out.append(str(apply_convention(value, convention)))
        except ReceValError as err:
            raise chk.fail(("metrics",), str(err)) from None
    if len(set(out)) != len(out):
        raise chk.fail(("metrics",), f"metrics {out} contain duplicates")
    return tuple(out)


def _groups(chk: _Checker, value: str | Mapping[str, Any], protocol: str, tuned: bool) -> GroupsSpec:
    """``groups = "FILE"`` or ``[groups]`` (path, unknown_group, test): the file read and checked now, before any task.

    The file is read by :func:`receval.stats.groups.read_user_groups` (columns ``user, group``) and
    must name two groups; its users are matched with each data set's when the data are prepared
    (:func:`receval.experiment.validation.prepare_checked`).
    """
    from receval.stats.groups import check_unknown_group, read_user_groups
    from receval.vocabulary import UNPAIRED_TEST_NAMES

    table = {"path": value} if isinstance(value, str) else value
    where = ("groups",)
    chk.keys(table, _GROUPS, where, "in [groups]")
    if "path" not in table:
        raise chk.fail(where, '[groups] needs path = "FILE" (a user,group table)')
    if protocol != "one-shot" or tuned:
        what = "a [tune] section" if tuned else f"protocol {protocol!r}"
        raise chk.fail(where, f"groups apply to the one-shot protocol's evaluations, not to {what}; leave groups out")
    test = table.get("test", "welch")
    if test not in UNPAIRED_TEST_NAMES:
        raise chk.fail((*where, "test"), f"groups test {test!r} is not one of {', '.join(UNPAIRED_TEST_NAMES)}"
                       + did_you_mean(test, UNPAIRED_TEST_NAMES))  # fmt: skip
    unknown = table.get("unknown_group")
    if unknown is not None and not unknown.strip():
        raise chk.fail((*where, "unknown_group"), "groups unknown_group = '': name the group that pools users "
                       "without one")  # fmt: skip
    spec = GroupsSpec(path=table["path"], unknown_group=unknown, test=cast(UnpairedTest, test),
                      base=None if chk.path.startswith("<") else str(Path(chk.path).resolve().parent))  # fmt: skip
    path_where = (*where, "path") if isinstance(value, Mapping) else where
    if not spec.resolved_path.is_file():
        raise chk.fail(path_where, f"groups file {str(spec.resolved_path)!r} does not exist; give a user,group table")
    try:
        names = set(read_user_groups(spec.resolved_path)["group"].str.strip())
    except ReceValError as err:
        raise chk.fail(path_where, f"groups: {err}") from None
    if len(names) < 2:
        raise chk.fail(path_where, f"groups file names one group only ({', '.join(sorted(names)) or 'none'}); "
                       "a gap needs two")  # fmt: skip
    try:
        check_unknown_group(unknown, names, repr(str(spec.resolved_path)))
    except ReceValError as err:
        raise chk.fail((*where, "unknown_group"), f"groups {err}") from None
    return spec


def _slices(chk: _Checker, table: Mapping[str, Any]) -> dict[str, tuple[str, ...]]:
    from receval.studies.slicing import SLICERS

    chk.keys(table, dict.fromkeys(SLICE_DIMENSIONS, list), ("slices",), "in [slices]")
    out = {}
    for dim, names in table.items():
        for name in names:
            chk.type(name, str, ("slices", dim))
            if name not in SLICERS[dim]:
                raise chk.fail(
                    ("slices", dim), f"unknown {dim} slice {name!r}; valid: {', '.join(sorted(SLICERS[dim]))}"
                )
        out[dim] = tuple(names)
    return out


# ------------------------------------------------------------------ tuning
def _tune(
    chk: _Checker,
    effective: Mapping[str, Any],
    split: Mapping[str, Any],
    recommenders: dict[str, RecommenderSpec],
    metrics: tuple[str, ...],
    proto: Any,
    first_seed: int,
) -> tuple[TuneSpec, dict[str, RecommenderSpec]]:
    """The ``[tune]`` section and every recommender's search space, checked before any trial.

    The tune seed defaults to the first of the configuration's ``seeds``.
    """
    from receval.metrics import parse_metric
    from receval.metrics.registry import metric_direction

    table = effective["tune"]
    where = ("tune",)
    chk.keys(table, _TUNE, where, "in [tune]")
    if proto.name != "one-shot":
        raise chk.fail(where, f"[tune] tunes one-shot evaluations; protocol {proto.name!r} is not one-shot")
    metric = table.get("metric", metrics[0] if metrics else None)
    if metric is None:
        raise chk.fail(where, '[tune] needs an objective: metric = "ndcg@10" (or a metrics list to take the first of)')
    try:
        metric = str(parse_metric(metric))
    except ReceValError as err:
        raise chk.fail((*where, "metric"), f"[tune] metric: {err}") from None
    direction = metric_direction(metric)
    if direction is None:
        raise chk.fail((*where, "metric"), f"[tune] metric {metric!r} describes, it has no better direction to tune")
    sampler = table.get("sampler", "tpe")
    if sampler not in SAMPLERS:
        raise chk.fail((*where, "sampler"), f"unknown sampler {sampler!r}; use one of {', '.join(SAMPLERS)}")
    trials, seconds = _budget(chk, table, where, "[tune]")
    refit = table.get("refit", REFITS[0])
    if refit not in REFITS:
        raise chk.fail((*where, "refit"), f"refit = {refit!r}: use one of {', '.join(map(repr, REFITS))}")
    storage = table.get("storage")
    if storage is not None:
        problem = _storage_problem(storage)
        if problem is not None:
            raise chk.fail((*where, "storage"), f"storage = {storage!r} {problem}")
    parallel = chk.value(check_count, table.get("parallel", 1), "tune.parallel", where=(*where, "parallel"))
    seed = chk.value(check_seed, table.get("seed", first_seed), "tune.seed", where=(*where, "seed"))
    for key, value in effective.get("protocol", {}).items():
        if isinstance(value, list):
            raise chk.fail(("protocol", key), f"protocol.{key} is a grid axis; a tuned comparison takes one value")
    validation = _validation_split(chk, table.get("validation"), split, "test_path" in table)
    out = {}
    for label, rec in recommenders.items():
        entry = effective["recommenders"][label]
        rwhere = ("recommenders", label)
        own_trials, own_seconds = _budget(chk, entry, rwhere, f"[recommenders.{label}]", required=False)
        if "space" not in entry:
            raise chk.fail(rwhere, f"[recommenders.{label}] has no search space to tune: add space = {{ ... }}")
        chk.type(entry["space"], dict, (*rwhere, "space"))
        space = _space(chk, rec, entry["space"], sampler, proto)
        out[label] = dataclasses.replace(rec, space=space, trials=own_trials, seconds=own_seconds)
        if any(isinstance(v, list) for v in rec.params.values()):
            raise chk.fail((*rwhere, "params"), f"[recommenders.{label}] params are fixed when tuning: no lists")
    if trials is None and seconds is None and any(r.trials is None and r.seconds is None for r in out.values()):
        raise chk.fail(where, "[tune] needs a budget: trials = N and/or seconds = S (the same for every recommender)")
    spec = TuneSpec(
        metric=metric,
        direction=str(direction),
        sampler=sampler,
        trials=trials,
        seconds=seconds,
        seed=seed,
        refit=refit,
        storage=storage,
        parallel=parallel,
        test_path=table.get("test_path"),
        validation=validation,
        default_candidate=table.get("default_candidate", True),
    )
    return spec, out


def _storage_problem(url: str) -> str | None:
    """What is wrong with a ``[tune] storage`` URL, in words (None when nothing is): its database, its SQLite file.

    Examples
    --------
    >>> _storage_problem("foo://bar")  # doctest: +ELLIPSIS
    "names no database receval can store a study in ('foo'); use one of sqlite, postgresql, ..."
    >>> _storage_problem("postgresql+psycopg2://host/db") is None, _storage_problem("sqlite:///:memory:") is None
    (True, True)
    """
    how = "give one (sqlite:///study.db, postgresql://host/db) or leave it out for tune.sqlite3 in the output folder"
    if "://" not in url:
        return f"is not a database URL; {how}"
    scheme = url.split("://", 1)[0].split("+", 1)[0].lower()
    if scheme not in STORAGE_SCHEMES:
        return f"names no database receval can store a study in ({scheme!r}); use one of {', '.join(STORAGE_SCHEMES)}"
    if scheme != "sqlite":
        return None
    name = url.split("://", 1)[1].split("?", 1)[0]
    if not name.startswith("/") or name in ("/", "/:memory:"):  # sqlite:// or sqlite:///:memory: is in memory
        return None if name in ("", "/", "/:memory:") else f"is not an SQLite URL; {how}"
    path = Path(name[1:])
    if path.is_dir():
        return f"is a folder, not a database file: name a file in it (sqlite:///{(path / 'study.db').as_posix()})"
    if path.exists():
        return None if os.access(path, os.R_OK | os.W_OK) else "is a file receval may not write; change its rights"
    if not path.parent.is_dir():
        return f"is in a folder that does not exist ({str(path.parent)!r}): create it first"
    if not os.access(path.parent, os.W_OK | os.X_OK):
        return f"is in a folder receval may not write ({str(path.parent)!r}): choose another place"
    return None


def _budget(
    chk: _Checker, table: Mapping[str, Any], where: tuple[str, ...], what: str, required: bool = True
) -> tuple[int | None, float | None]:
    trials = table.get("trials")
    seconds = table.get("seconds")
    if trials is not None:
        chk.value(check_count, trials, f"{what} trials", where=(*where, "trials"))
    if seconds is not None:
        chk.value(check_number, seconds, f"{what} seconds", where=(*where, "seconds"))
        if seconds <= 0:
            raise chk.fail((*where, "seconds"), f"{what} seconds = {seconds}: a time budget must be positive")
    return trials, None if seconds is None else float(seconds)


def _validation_split(
    chk: _Checker, table: Mapping[str, Any] | None, split: Mapping[str, Any], given_test: bool
) -> dict[str, Any]:
    """``[tune.validation]``: a split method and its options; by default the kind of the test split."""
    if table is None:
        if given_test or split["method"] == NO_SPLIT:
            return {"method": "holdout", "test_fraction": 0.2}
        if split_method(split["method"]).folds:
            raise chk.fail(("split", "method"), "tuning needs one test split, not folds: pick another [split] method")
        return dict(split)
    return _split_table(chk, table, ("tune", "validation"), "[tune.validation]")


def _space(chk: _Checker, rec: RecommenderSpec, table: Mapping[str, Any], sampler: str, proto: Any) -> tuple:
    """The recommender's search space; names checked against its class, each end of a range built once."""
    from receval.recommenders.registry import list_algorithms

    where = ("recommenders", rec.label, "space")
    if not table:
        raise chk.fail(where, f"[recommenders.{rec.label}] space is empty: give at least one parameter to tune")
    try:
        known = list(list_algorithms([rec.algorithm])[0].params)
    except ConfigError as err:
        raise chk.fail(("recommenders", rec.label), err.message) from None
    ranges: list[ParamRange] = []
    for name, entry in table.items():
        pwhere = (*where, name)
        if name not in known:
            hint = did_you_mean(name, known, n=1)
            raise chk.fail(
                pwhere, f"{rec.algorithm} has no parameter {name!r} to tune{hint} (its parameters: {', '.join(known)})"
            )
        if name in rec.params:
            raise chk.fail(pwhere, f"{name!r} is both fixed in params and tuned in space: keep one")
        chk.type(entry, dict, pwhere)
        chk.keys(entry, SPACE_KEYS, pwhere, f"in space.{name}")

        def fail(path: tuple[str, ...], text: str, at: tuple[str, ...] = pwhere) -> Exception:
            return chk.fail((*at, *path), text)

        ranges.append(parse_range(name, entry, ranges, fail))
    if sampler == "grid" and any(r.when for r in ranges):
        raise chk.fail(where, 'grid search takes no conditional parameters (\'when\'): use sampler = "tpe" or "random"')
    if sampler == "grid" and any(r.kind == "float" and r.step is None for r in ranges):
        raise chk.fail(where, "grid search needs a step for every float range (or choices)")
    if sampler == "grid":  # Optuna lists every point of the grid: its size is checked before it is built
        total = 1
        for r in ranges:
            points = len(r.choices) if r.kind == "choices" else int((r.high - r.low) // (r.step or 1)) + 1  # type: ignore[operator]
            total *= points
            if total > GRID_POINTS:
                raise chk.fail(
                    (*where, r.name),
                    f"[recommenders.{rec.label}] space: grid search over {total:.3g} points or more "
                    f"(space.{r.name} alone has {points:.3g}); the limit is {GRID_POINTS:,}: take a larger step, "
                    'fewer choices, or sampler = "tpe"',
                )
    for r in ranges:  # the model's own rules for each value at an end of the range
        for value in (r.low, r.high) if r.kind != "choices" else r.choices:
            trial = {**rec.params, r.name: int(value) if r.kind == "int" else value}
            try:
                proto.factory(rec.algorithm, trial, proto.defaults())
            except (ConfigError, TypeError, ValueError) as err:
                text = err.message if isinstance(err, ConfigError) else str(err)
                raise chk.fail((*where, r.name), f"space.{r.name} = {value!r}: {text}") from None
    return tuple(ranges)
