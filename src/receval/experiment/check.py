"""``receval check``: a linter for evaluation protocols — the known ways to publish false progress.

:func:`check_path` reads a run configuration (TOML, validated by
:func:`~receval.experiment.config.load_config`), a result store (the folder ``receval run``
wrote) or a split folder (``train.tsv`` + ``test.tsv`` or ``fold-N/``, as ``receval split``
writes) and returns one :class:`Finding` per flaw it sees, each with its rule's stable
identifier (:data:`RULES`), what is wrong, and the paper that showed why it matters
(Bellogín & Said, UMUAI 2021, survey these flaws; docs/guides/check.md says how to fix each).

The rules read what a configuration or store records: the protocol and its options, the
split method, the seeds, the filters, the ``[tune]`` section, the data's own columns
(timestamps, graded ratings). Two rules judge choices made when runs are *compared*
(``R008`` many comparisons without a correction, ``R009`` a test known to drift at this
n): nothing records them in a configuration or store, so :func:`comparison_findings`
checks them for a caller that knows the test and correction (``receval compare``).

Examples
--------
>>> text = 'seeds = 1\\nmetrics = ["ndcg@10"]\\n[datasets.toy]\\n'
>>> text += 'generate = { n_users = 30, n_items = 20, n_ratings = 200, seed = 1 }\\n'
>>> text += '[split]\\nmethod = "per-user"\\n[protocol]\\nname = "one-shot"\\n[recommenders.popularity]\\n'
>>> from receval.experiment.config import parse_config
>>> [f.rule for f in config_findings(parse_config(text, path="demo.toml"))]
['R007']
>>> [f.rule for f in comparison_findings(test="wilcoxon", correction="none", n_users=5000, n_comparisons=6)]
['R008', 'R009']
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from receval.errors import ConfigError, DataError
from receval.experiment.config import DatasetSpec, ExperimentConfig, load_config, parse_config
from receval.vocabulary import COLD_START_DEFAULT, NO_SPLIT, split_method

__all__ = [
    "DRIFTING_TESTS",
    "DRIFT_N",
    "RULES",
    "DataFacts",
    "Finding",
    "check_path",
    "comparison_findings",
    "config_findings",
    "split_findings",
    "toml_text",
]


@dataclass(frozen=True)
class Rule:
    """A rule: its stable identifier, a slug, and the reference that shows the flaw matters."""

    id: str
    slug: str
    reference: str


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule(
            "R001",
            "sampled-metrics-uncorrected",
            "Krichene & Rendle, On Sampled Metrics for Item Recommendation, KDD 2020",
        ),
        Rule(
            "R002",
            "random-split-on-timestamps",
            "Ji, Sun, Zhang & Li, A Critical Study on Data Leakage in Recommender System Offline Evaluation, "
            "ACM TOIS 2023",
        ),
        Rule(
            "R003",
            "test-users-removed",
            "Bellogín & Said, Improving accountability in recommender systems research through reproducibility, "
            "UMUAI 2021 (data filtering); Ji et al., ACM TOIS 2023",
        ),
        Rule(
            "R004",
            "tuning-on-test",
            "Rendle, Zhang & Koren, On the Difficulty of Evaluating Baselines, arXiv 1905.01395, 2019",
        ),
        Rule(
            "R005",
            "unequal-tuning-budgets",
            "Rendle, Zhang & Koren, arXiv 1905.01395, 2019; Dacrema, Cremonesi & Jannach, RecSys 2019",
        ),
        Rule(
            "R006",
            "untuned-baselines",
            "Dacrema, Cremonesi & Jannach, Are We Really Making Much Progress?, RecSys 2019",
        ),
        Rule(
            "R007",
            "one-seed-or-fold",
            "Bellogín & Said, UMUAI 2021 (variance over splits); Dacrema et al., RecSys 2019",
        ),
        Rule(
            "R008",
            "many-comparisons-uncorrected",
            "Sakai, Statistical Significance, Power, and Sample Sizes, SIGIR 2016; Holm, Scand. J. Statist. 1979",
        ),
        Rule(
            "R009",
            "test-drifts-at-this-n",
            "Ihemelandu & Ekstrand, Inference at Scale: Significance Testing for Large Search and Recommendation "
            "Experiments, arXiv 2305.02461, 2023",
        ),
        Rule(
            "R010",
            "implicit-conventions",
            "Bellogín & Said, UMUAI 2021; receval docs/guides/check.md (library presets: convention = NAME)",
        ),
        Rule("R011", "cold-start-policy-unstated", "Ji et al., ACM TOIS 2023; Bellogín & Said, UMUAI 2021"),
        Rule(
            "R012",
            "threshold-without-ratings",
            "Bellogín & Said, UMUAI 2021 (relevance definitions); Cañamares & Castells, SIGIR 2018",
        ),
    )
}
"""Every rule by identifier; the guide (docs/guides/check.md) has a line for each."""

DRIFTING_TESTS: tuple[str, ...] = ("wilcoxon", "sign")
"""Paired tests Ihemelandu & Ekstrand (arXiv 2305.02461) found to inflate false positives at large n."""

DRIFT_N = 1000
"""Users from which ``R009`` warns about :data:`DRIFTING_TESTS`: receval's own A/A study
(:mod:`receval.studies.aa`, ``receval aa``) measures each test's false-positive rate at n."""

_RANDOM_SPLITS = ("holdout", "per-user", "kfold", "loo-random")  # methods that ignore time
_COLD_SPLITS = ("holdout", "temporal")  # methods that can hold out every pair of a user: cold test users
_FILTERS_REMOVING = ("min_user_ratings", "min_item_ratings", "familiar_only")


@dataclass(frozen=True)
class Finding:
    """One flaw: the rule's identifier, what is wrong here and how to fix it, the reference."""

    rule: str
    message: str
    reference: str

    def as_dict(self) -> dict[str, str]:
        """The JSON-able form ``receval check --json`` prints."""
        return asdict(self)


def _finding(rule: str, message: str) -> Finding:
    return Finding(rule, f"{RULES[rule].slug}: {message}", RULES[rule].reference)


@dataclass(frozen=True)
class DataFacts:
    """What the rules need to know of a data set: whether it has timestamps and graded ratings."""

    timestamps: bool
    graded: bool

    @classmethod
    def of(cls, data: Any) -> DataFacts:
        """The facts of :class:`~receval.data.Interactions` ``data``."""
        ratings = data.ratings
        return cls(timestamps=data.timestamps is not None, graded=bool(len(ratings) and ratings.min() != ratings.max()))


def _timestamp_message(where: str, method: str, leakage: float | None = None) -> str:
    """R002's message; the one place a measured leakage figure (receval.stats.leakage.audit) is added."""
    measured = "" if leakage is None else f" ({leakage:.1%} of test pairs precede a training pair)"
    return (
        f"{where}: split method {method!r} ignores time on data with timestamps{measured}: training data can "
        'come after the test data; use method = "temporal" (or "temporal-per-user", "loo")'
    )


def _split_method(split: Mapping[str, Any]) -> str | None:
    name = split.get("method")
    if name is None or name == NO_SPLIT:
        return None
    method = split_method(str(name))
    if method.name == "leave-one-out":
        return "loo-random" if split.get("mode") == "random" else "loo"
    return method.name


def config_findings(cfg: ExperimentConfig, facts: Mapping[str, DataFacts] | None = None) -> list[Finding]:
    """The findings of a validated configuration; ``facts`` (per data set label) enable the data rules.

    Without ``facts`` the rules that need the data (``R002``, ``R012``) are not judged.
    """
    out: list[Finding] = []
    opts = dict(cfg.protocol.options)
    src = cfg.source
    method = _split_method(cfg.split)
    if cfg.protocol.name == "sampled":
        corrections = [str(c).lower() for c in opts.get("corrections", [])]
        if corrections and set(corrections) <= {"none"}:
            out.append(
                _finding(
                    "R001",
                    f"{src}: protocol.corrections = {corrections}: sampled metrics are "
                    'reported uncorrected; add a correction ("bv", "mapping", "ls") or drop '
                    "the option for the default set",
                )
            )
    for label, fact in (facts or {}).items():
        if method in _RANDOM_SPLITS and fact.timestamps:
            out.append(_finding("R002", _timestamp_message(f"{src}: data set {label!r}", method)))
        threshold = opts.get("threshold", cfg.datasets[label].threshold)
        if threshold is not None and not fact.graded:
            out.append(
                _finding(
                    "R012",
                    f"{src}: data set {label!r} has one rating value (implicit feedback) but a "
                    f"relevance threshold {threshold} is set: drop the threshold",
                )
            )
    for spec in cfg.datasets.values():
        out.extend(_filter_findings(src, spec))
    if opts.get("cold_start") == "exclude":
        out.append(
            _finding(
                "R003",
                f'{src}: protocol.cold_start = "exclude" leaves cold test users out of the '
                'evaluation: use "empty" or "fallback" and report the cold users',
            )
        )
    out.extend(_tuning_findings(cfg))
    folds = method == "kfold"
    if len(cfg.seeds) < 2 and not folds and method is not None:
        out.append(
            _finding(
                "R007",
                f"{src}: one seed ({list(cfg.seeds)}) and one split: no variance over splits or "
                'seeds is measured; use seeds = 5 or [split] method = "kfold"',
            )
        )
    peers = sorted({r.algorithm for r in cfg.recommenders.values() if ":" in r.algorithm})
    if peers and cfg.convention is None:
        out.append(
            _finding(
                "R010",
                f"{src}: recommenders {peers} come from other libraries but no convention is "
                'named: set convention = "<library>" so the metrics match that library\'s',
            )
        )
    if cfg.protocol.name == "one-shot" and "cold_start" not in opts and method in _COLD_SPLITS:
        out.append(
            _finding(
                "R011",
                f"{src}: split method {method!r} can leave test users without training data and "
                f"no cold_start policy is stated (default {COLD_START_DEFAULT!r}): set "
                "protocol.cold_start",
            )
        )
    return sorted(out, key=lambda f: f.rule)


def _filter_findings(src: str, spec: DatasetSpec) -> list[Finding]:
    removing = {k: v for k, v in spec.filters.items() if k in _FILTERS_REMOVING and v}
    if not removing:
        return []
    return [
        _finding(
            "R003",
            f"{src}: data set {spec.label!r} filters {removing} remove users or items before the "
            "split: the test users are not the data's; report the filter and the users it removes, "
            "or evaluate on all users",
        )
    ]


def _grid(values: Iterable[Any]) -> int:
    return math.prod(len(v) for v in values if isinstance(v, list))


def _tuning_findings(cfg: ExperimentConfig) -> list[Finding]:
    src, out = cfg.source, []
    recs = cfg.recommenders
    if cfg.tune is None:
        grids = {label: _grid(r.params.values()) for label, r in recs.items()}
        tuned = sorted(label for label, n in grids.items() if n > 1)
        if tuned:
            out.append(
                _finding(
                    "R004",
                    f"{src}: recommenders {tuned} have parameter grids evaluated on the test data: "
                    "a best point chosen there is tuned on test; add a [tune] section (validation "
                    "carved from the training data)",
                )
            )
        if tuned and len(tuned) < len(recs):
            fixed = sorted(set(recs) - set(tuned))
            out.append(
                _finding(
                    "R006",
                    f"{src}: {fixed} run with fixed parameters beside tuned {tuned}: tune every "
                    "system of a comparison with [tune]",
                )
            )
        return out
    budgets = {label: cfg.tune.budget(r) for label, r in recs.items()}
    if len(set(budgets.values())) > 1:
        shown = ", ".join(f"{label}: trials={t} seconds={s}" for label, (t, s) in sorted(budgets.items()))
        out.append(
            _finding(
                "R005", f"{src}: unequal tuning budgets ({shown}): give every recommender the [tune] section's budget"
            )
        )
    return out


def comparison_findings(*, test: str, correction: str, n_users: int, n_comparisons: int) -> list[Finding]:
    """The findings of a comparison's choices: ``R008`` (``n_comparisons`` > 1 without a correction), ``R009``.

    ``R009``: a test of :data:`DRIFTING_TESTS` at ``n_users`` ≥ :data:`DRIFT_N`.
    """
    out = []
    if n_comparisons > 1 and correction.lower() == "none":
        out.append(
            _finding(
                "R008",
                f'{n_comparisons} comparisons with correction "none": the family-wise error rate '
                "exceeds α; use --correction holm (or bh)",
            )
        )
    if test.lower() in DRIFTING_TESTS and n_users >= DRIFT_N:
        out.append(
            _finding(
                "R009",
                f"the {test} test at n = {n_users} users (≥ {DRIFT_N}) rejects true nulls more "
                "often than α; use the t-test or the permutation test",
            )
        )
    return out


def split_findings(folder: Path) -> list[Finding]:
    """The findings of a split folder as ``receval split`` writes it (``train.tsv``/``test.tsv`` or ``fold-N/``)."""
    from receval.data import load

    for fold in sorted(p for p in folder.glob("fold-*") if p.is_dir() and p.name[5:].isdigit()):
        lacking = [name for name in ("train.tsv", "test.tsv") if not (fold / name).is_file()]
        if lacking:  # it was skipped, and the folder read as one split: 'chk/train.tsv: no such file'
            raise DataError(f"{fold}: a fold of a split folder holds train.tsv and test.tsv; {' and '.join(lacking)} "
                            "is missing (write the folds again with receval split)")  # fmt: skip
    folds = sorted(p for p in folder.glob("fold-*") if (p / "train.tsv").is_file() and (p / "test.tsv").is_file())
    parts = folds or [folder]
    out = []
    if len(parts) == 1:
        out.append(
            _finding(
                "R007",
                f"{folder}: one train/test split: no variance over splits is measured; write "
                "several (receval split --seed S, or --method kfold)",
            )
        )
    for part in parts:
        train, test = load(part / "train.tsv", "tsv"), load(part / "test.tsv", "tsv")
        tr, te = train.to_frame(), test.to_frame()
        if train.timestamps is not None and test.timestamps is not None:
            # a time-respecting split holds out the latest pairs (overall or per user): per-user latest pairs can
            # precede other users' training pairs, so the rule looks at each user's own pairs
            last_train = tr.groupby("user")["timestamp"].max()
            mixed = te["timestamp"] < te["user"].map(last_train).fillna(-math.inf)
            if bool(mixed.any()):
                out.append(
                    _finding(
                        "R002",
                        _timestamp_message(str(part), "random (test pairs precede the same user's training pairs)"),
                    )
                )
        cold = sorted(set(te["user"]) - set(tr["user"]))
        if cold:
            out.append(
                _finding(
                    "R011",
                    f"{part}: {len(cold)} test users have no training pair: state a cold-start "
                    "policy when evaluating (receval evaluate --cold-start)",
                )
            )
    return out


def toml_text(value: Mapping[str, Any]) -> str:
    """A configuration's effective mapping as TOML text (inline tables) that parses back to it.

    >>> import tomllib
    >>> doc = {"name": "x", "seeds": [0, 1], "datasets": {"a b": {"generate": {"n_users": 5}}}}
    >>> tomllib.loads(toml_text(doc)) == doc
    True
    """
    return "".join(f"{json.dumps(str(k))} = {_toml_value(v)}\n" for k, v in value.items())


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and not math.isfinite(v):
        return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {_toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, int | float | str):
        return json.dumps(v)
    raise ConfigError(f"a configuration value of type {type(v).__name__} has no TOML form: {v!r}")


def _facts(cfg: ExperimentConfig) -> dict[str, DataFacts]:
    """What each data set holds, once the checks ``run`` and ``tune`` make before their first task have passed.

    The grid is counted and every task's values are checked against its data (thresholds, folds, splits, sampled
    metrics), so a configuration that ``run`` would refuse is refused here too, with the same message.
    """
    from receval.experiment.grid import expand
    from receval.experiment.validation import prepare_checked

    prepared = prepare_checked(cfg, expand(cfg))
    return {label: DataFacts.of(prepared[spec.key].data) for label, spec in cfg.datasets.items()}


def _store_config(root: Path) -> ExperimentConfig:
    """The configuration a store records (experiment.json), data paths resolved as the run read them."""
    from receval.experiment.store import DATA_PATHS, ResultStore

    meta = ResultStore(root).meta()
    if meta is None or not isinstance(meta.get("config"), Mapping):
        raise ConfigError(f"{root / 'experiment.json'}: unreadable or without the run's configuration; run it again")
    config = dict(meta["config"])
    datasets = {label: dict(spec) for label, spec in config.get("datasets", {}).items()}
    for label, path in meta.get(DATA_PATHS, {}).items():
        if label in datasets and "path" in datasets[label]:
            datasets[label]["path"] = path
    config["datasets"] = datasets
    return parse_config(toml_text(config), path=str(root / "experiment.json"))


def check_path(path: str | Path) -> list[Finding]:
    """The findings of a configuration file, a result store folder or a split folder (else a ConfigError).

    >>> check_path("missing.toml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: missing.toml: not a run configuration (.toml), a result store ...
    """
    p = Path(path)
    if p.is_file() and p.suffix.lower() == ".toml":
        cfg = load_config(p)
        return config_findings(cfg, _facts(cfg))
    if p.is_dir() and (p / "experiment.json").is_file():
        cfg = _store_config(p)
        return config_findings(cfg, _facts(cfg))
    if p.is_dir() and ((p / "train.tsv").is_file() or any(p.glob("fold-*/train.tsv"))):
        return split_findings(p)
    raise ConfigError(
        f"{p}: not a run configuration (.toml), a result store (a folder with experiment.json) or a split folder "
        "(train.tsv and test.tsv, or fold-N/); give one of those"
    )
