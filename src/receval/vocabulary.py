"""The names of receval's choices, in one table that the command line, the configuration and Python read.

**Split methods** (:data:`SPLIT_METHODS`): ``receval split --method``, a configuration's
``[split] method`` and :func:`receval.split.split_by_name` take the same names. Each name
stands for a function of :mod:`receval.split` and the parameters the name fixes
(``temporal-per-user`` is :func:`~receval.split.temporal` with ``per_user=True``); its
options are the function's other keyword parameters, which a configuration may set
(``test_fraction``, ``min_train``, ``k`` …). Names are case-insensitive and ``-`` and ``_``
are one letter, so ``per_user``, ``per-user`` and ``Per-User`` are one method; the
functions' own names (``per_user_holdout``, ``kfold_per_user``, ``leave_one_out``) are
names too.

**Paired tests and corrections** (:data:`TEST_NAMES`, :data:`CORRECTION_NAMES`):
``receval compare --test/--correction``,
:func:`receval.stats.significance.compare_systems` and the reports, each with its name in
words.

**Cold-start users** (:data:`COLD_START_POLICIES`, default :data:`COLD_START_DEFAULT`): what
happens to test users without a training rating, the same name and values for
``receval recommend/evaluate/compare --cold-start``, a configuration's
``[protocol] cold_start`` and ``recommend(..)``, ``evaluate(..)``,
``evaluate_model(..)``'s ``cold_start=`` (docs/concepts.md, "Cold-start users: one policy").

**Library conventions** (:data:`CONVENTION_NAMES`): ``--convention NAME``, a
configuration's ``convention``, ``evaluate(..., convention=NAME)`` and a metric string's
``convention=NAME`` (the presets themselves are :mod:`receval.metrics.conventions`).

**Ties and ranks** (:data:`TIE_RULES`, :data:`RANK_READINGS`): how items of equal score are
ordered in a list and how a rank column is read, the same words for ``receval evaluate
--ties/--ranks``, ``evaluate(..)``'s ``ties=``/``ranks=`` and :mod:`receval.evaluation.align`
(:data:`TIE_ORDERS`: each rule as an evaluation's conventions state it).

**Sampled evaluation** (:data:`SAMPLING_SCHEMES`, :data:`SAMPLE_SHAPES`,
:data:`SAMPLED_CORRECTIONS`): how negatives are drawn, whether a sample belongs to a test
item or to a user, and the estimate of the full-catalogue metric from sampled ranks
(:data:`UNIFORM_ONLY_CORRECTIONS`: the estimates valid only for uniform draws); the
same words in metric strings (``sampling=``, ``correction=``), the command line, a
configuration and :mod:`receval.evaluation.candidates` / :mod:`receval.stats.sampled`
(docs/sampled_estimators.md).

Standard library only: ``receval --help`` reads this module.

Examples
--------
>>> split_method("temporal_per_user").function, dict(split_method("temporal_per_user").fixed)
('temporal', {'per_user': True})
>>> split_method("per_user_holdout").name, split_method("KFold").options
('per-user', ('k',))
>>> split_method("random")
Traceback (most recent call last):
...
receval.errors.ConfigError: unknown split method 'random'; use one of holdout, per-user, temporal, ...
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

from receval.errors import ConfigError

__all__ = [
    "COLD_START_DEFAULT",
    "COLD_START_POLICIES",
    "CONVENTION_NAMES",
    "ColdStart",
    "CORRECTION_NAMES",
    "Correction",
    "MULTI_TEST_NAMES",
    "NO_SPLIT",
    "OPE_DEFAULT_TARGETS",
    "OPE_ESTIMATORS",
    "OPE_POLICIES",
    "RANKS",
    "RANK_READINGS",
    "Ranks",
    "DEFAULT_SAMPLED_CORRECTIONS",
    "PROTOCOLS_STUDY_ALGORITHMS",
    "PROTOCOLS_STUDY_CORES",
    "STUDY_PROTOCOLS",
    "STUDY_VARIANTS",
    "SAMPLED_CORRECTIONS",
    "SAMPLE_SHAPES",
    "SAMPLING_SCHEMES",
    "SPLIT_ALIASES",
    "SPLIT_CANDIDATES",
    "SPLIT_COMMON",
    "SPLIT_METHODS",
    "SPLIT_TARGETS",
    "STATISTIC_NAMES",
    "SplitMethod",
    "TEST_NAMES",
    "TIES",
    "TIE_ORDERS",
    "TIE_RULES",
    "Ties",
    "TestName",
    "UNIFORM_ONLY_CORRECTIONS",
    "UNPAIRED_TEST_NAMES",
    "UNPAIRED_TEST_NAMES_K",
    "UnpairedTest",
    "cold_start_policy",
    "sampled_word",
    "split_candidates",
    "split_method",
    "split_targets",
]

CONVENTION_NAMES: tuple[str, ...] = (
    "trec_eval",
    "ranx",
    "recbole",
    "lenskit",
    "rectools",
    "recpack",
    "elliot",
    "msr",
    "cornac",
)
"""The libraries whose conventions receval reproduces by name (case-insensitive, ``-`` read as ``_``)."""

ColdStart = Literal["empty", "exclude", "fallback"]
# what each policy does with a cold user (a test user without a training rating), in words
COLD_START_POLICIES: dict[ColdStart, str] = {
    "empty": "scored as an empty list when it has none",
    "exclude": "left out of the evaluation",
    "fallback": "given the most-rated training items (Popularity over the training data) when it has no list",
}
COLD_START_DEFAULT: ColdStart = "empty"
"""The policy when none is given: a user without a list scores 0 on every accuracy metric."""

SAMPLING_SCHEMES: tuple[str, ...] = ("uniform", "popularity")
"""How sampled negatives are drawn: uniformly, or in proportion to training popularity ** exponent."""

OPE_ESTIMATORS: tuple[str, ...] = ("dm", "ips", "snips", "dr", "switch", "dros")
"""Off-policy estimators (:mod:`receval.stats.ope`): direct method, inverse propensity scoring, its
self-normalised form, doubly robust, switch-DR and DR with optimistic shrinkage (Su et al. 2020)."""
OPE_POLICIES: tuple[str, ...] = ("random", "greedy", "egreedy", "softmax", "ucb", "thompson")
"""Policies of the logging pass (:mod:`receval.simulate.logged`), logging or target."""
OPE_DEFAULT_TARGETS: tuple[str, ...] = ("random", "greedy", "egreedy:0.1", "softmax:0.1", "thompson", "ucb")
"""The target policies of ``receval ope`` and of the ``ope`` protocol when none are given."""
SAMPLE_SHAPES: tuple[str, ...] = ("per-item", "per-user", "recbole")
"""One sample of negatives per held-out test item, each item ranked against its own (NCF); one per user shared by its
test items, each ranked against the negatives alone; or RecBole's ``uni100``: a sample per held-out item, pooled per
user, and all of the user's positives ranked together with the pooled negatives in one list."""
SAMPLED_CORRECTIONS: tuple[str, ...] = ("none", "ls", "bv", "mapping", "mle", "mes")
"""Estimates of the full-catalogue metric from sampled ranks: uncorrected, Krichene & Rendle's least squares and
bias-variance, Li et al.'s mapping, Jin et al.'s maximum likelihood and maximum entropy."""
DEFAULT_SAMPLED_CORRECTIONS: tuple[str, ...] = ("none", "ls", "bv", "mapping")
"""The corrections a sampled study runs when none are named (with uniform draws): the closed forms, milliseconds
per sample. ``mle`` and ``mes`` fit a rank distribution over the whole catalogue per system and sample (seconds
each on a 10,000-item catalogue, minutes for a study of 20 samples of several systems): they run when named."""
UNIFORM_ONLY_CORRECTIONS: tuple[str, ...] = ("ls", "bv", "mapping", "mle", "mes")
"""The corrections that rest on the binomial law of uniformly drawn negatives (every one but ``none``): a metric
string, a configuration or a command asking one with ``sampling=popularity`` is refused before any work."""

TestName = Literal["ttest", "wilcoxon", "permutation"]
Correction = Literal["bonferroni", "holm", "bh", "none"]
# each paired test in words, as reports and tables name it
TEST_NAMES: dict[TestName, str] = {
    "ttest": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "permutation": "paired randomisation test",
}
# tests over all pairs of k systems at once, with one family-wise error rate (``receval compare --test tukey``):
# they take the place of a paired test and its correction
MULTI_TEST_NAMES: dict[str, str] = {
    "tukey": "randomised Tukey HSD (all pairs, one family-wise error rate)",
}
# what each test's statistic is
STATISTIC_NAMES: dict[TestName, str] = {
    "ttest": "t",
    "wilcoxon": "W = min(R+, R−)",
    "permutation": "mean difference",
}
# unpaired tests of a gap between user groups (receval.stats.groups): two groups, then more than two
UnpairedTest = Literal["welch", "mannwhitney", "permutation"]
UNPAIRED_TEST_NAMES: dict[UnpairedTest, str] = {
    "welch": "Welch's t-test",
    "mannwhitney": "Mann–Whitney U test",
    "permutation": "unpaired permutation test of the difference of means",
}
UNPAIRED_TEST_NAMES_K: dict[UnpairedTest, str] = {
    "welch": "one-way ANOVA F-test",
    "mannwhitney": "Kruskal–Wallis H test",
    "permutation": "unpaired permutation test of the range of group means",
}
# each multiple-comparison correction in words (``none``: p-values as the test gives them).
CORRECTION_NAMES: dict[Correction, str] = {
    "holm": "Holm",
    "bonferroni": "Bonferroni",
    "bh": "Benjamini–Hochberg",
    "none": "none",
}

Ties = Literal["input", "id", "trec_eval"]
"""How items of equal score (or equal rank) are ordered in a list."""
# each tie rule in words, as --ties' help gives them: ``input`` keeps the order of the rows (of the columns, for a
# score matrix); ``id`` orders tied items by item id ascending (numbers as numbers, text as text); ``trec_eval`` by
# item id descending, compared as text byte by byte, as trec_eval's ``form_res_rels.c`` sorts a run
# (``comp_sim_docno``: score descending, then ``strcmp`` of the two docnos reversed)
TIE_RULES: dict[Ties, str] = {
    "input": "as the rows come",
    "id": "item id ascending",
    "trec_eval": "item id descending, as trec_eval sorts",
}
TIES: tuple[str, ...] = tuple(TIE_RULES)
"""The tie rules (:data:`TIE_RULES`)."""
# each tie rule as an evaluation's conventions state how its lists were ordered (``conventions.tie_break``)
TIE_ORDERS: dict[Ties, str] = {
    "input": "ties in input order",
    "id": "ties by item id ascending",
    "trec_eval": "ties by item id descending as text (trec_eval's order)",
}
Ranks = Literal["order", "positions"]
"""How a rank column is read."""
# each reading of a rank column in words, as --ranks' help gives them: ``order`` (2, 5, 9 are a list's first three
# items) or ``positions`` (RecTools reads its ``rank`` column so, filtering ``rank <= k``)
RANK_READINGS: dict[Ranks, str] = {
    "order": "the ranks only order each list",
    "positions": "rank r is position r, a missing rank an empty position, as RecTools reads it",
}
RANKS: tuple[str, ...] = tuple(RANK_READINGS)
"""The readings of a rank column (:data:`RANK_READINGS`)."""


@dataclass(frozen=True)
class SplitMethod:
    """A split method: a function of :mod:`receval.split`, the parameters its name fixes and the options left.

    Attributes
    ----------
    name
        The method's name (``receval split --method NAME``).
    function
        The function of :mod:`receval.split` it calls.
    fixed
        Keyword parameters the name sets (``{"per_user": True}``).
    options
        The function's other keyword parameters but ``seed``, which a configuration may set.
    description
        What the test set holds, in words.
    """

    name: str
    function: str
    fixed: Mapping[str, Any] = field(default_factory=dict)
    options: tuple[str, ...] = ()
    description: str = ""

    def n_folds(self, options: Mapping[str, Any]) -> int:
        """How many folds the method gives with ``options`` (a ``[split]`` table): ``k``, ``windows`` or 1."""
        if self.function == "rolling":
            return int(options.get("windows", 5))
        return int(options.get("k", 5)) if self.folds else 1

    @property
    def folds(self) -> bool:
        """Whether the method gives several (train, test) folds (``fold-1``, ``fold-2`` … on disk)."""
        return self.function in ("kfold_per_user", "rolling")


def _method(name: str, function: str, fixed: Mapping[str, Any], options: tuple[str, ...], text: str) -> SplitMethod:
    return SplitMethod(name, function, MappingProxyType(dict(fixed)), options, text)


SPLIT_METHODS: dict[str, SplitMethod] = {
    m.name: m
    for m in (
        _method("holdout", "holdout", {}, ("test_fraction",), "random pairs of all users"),
        _method("per-user", "per_user_holdout", {}, ("test_fraction", "min_train"),
                "a random share of each user's pairs"),
        _method("temporal", "temporal", {}, ("test_fraction", "per_user", "min_train", "at"),
                "the latest pairs overall (each user's latest with per_user=true)"),
        _method("temporal-per-user", "temporal", {"per_user": True}, ("test_fraction", "min_train"),
                "each user's latest pairs"),
        _method("loo", "leave_one_out", {"mode": "last"}, (), "each user's last pair, by time"),
        _method("loo-random", "leave_one_out", {"mode": "random"}, (), "one random pair of each user"),
        _method("leave-one-out", "leave_one_out", {}, ("mode",),
                "one pair of each user: mode = last (default) or random"),
        _method("kfold", "kfold_per_user", {}, ("k",), "per-user k-fold cross-validation: k folds (default 5)"),
        _method("rolling", "rolling", {}, ("windows", "window", "expanding", "gap"),
                "rolling-origin backtest: the last N spans of time, each a fold tested after its past"),
    )
}  # fmt: skip
"""Every split method by name (see :class:`SplitMethod`)."""

SPLIT_ALIASES: dict[str, str] = {"per-user-holdout": "per-user", "kfold-per-user": "kfold"}
"""The split functions' own names that are not a method's name, and the method each stands for."""


SPLIT_COMMON: tuple[str, ...] = ("targets", "candidates", "core")
"""The options every split method takes (:func:`receval.split.split_by_name`): targets, candidates, the k-core."""

SPLIT_TARGETS: tuple[str, ...] = ("all", "first", "last", "successive")
"""Which of each user's test pairs a split keeps (``targets=``, :func:`receval.split.select_targets`)."""

SPLIT_CANDIDATES: tuple[str, ...] = ("all", "existing")
"""Which test items a split keeps (``candidates=``): all, or those with a training rating (existing before the cut)."""


def split_targets(value: object) -> str:
    """``value`` as a word of :data:`SPLIT_TARGETS` (any case), or a ConfigError naming them.

    Returns
    -------
    str
        The word.

    Examples
    --------
    >>> split_targets("Last")
    'last'
    """
    key = str(value).strip().lower()
    if key not in SPLIT_TARGETS:
        raise ConfigError(f"targets={value}: use one of {', '.join(SPLIT_TARGETS)}", parameters=["targets"])
    return key


def split_candidates(value: object) -> str:
    """``value`` as a word of :data:`SPLIT_CANDIDATES` (any case), or a ConfigError naming them.

    Returns
    -------
    str
        The word.

    Examples
    --------
    >>> split_candidates("EXISTING")
    'existing'
    """
    key = str(value).strip().lower()
    if key not in SPLIT_CANDIDATES:
        raise ConfigError(f"candidates={value}: use one of {', '.join(SPLIT_CANDIDATES)}", parameters=["candidates"])
    return key


NO_SPLIT = "none"
"""A configuration's ``[split] method`` for protocols that use the data as it is (no train/test split)."""


def _key(name: str) -> str:
    return name.strip().lower().replace("_", "-")


def split_method(name: str) -> SplitMethod:
    """The :class:`SplitMethod` called ``name`` (any case; ``-`` or ``_``; a function's name), or a ConfigError.

    Returns
    -------
    SplitMethod
        The method, with the function it calls and the parameters its name fixes.

    Examples
    --------
    >>> split_method("LOO").fixed["mode"], split_method("leave_one_out").options
    ('last', ('mode',))
    """
    key = _key(str(name))
    found = SPLIT_METHODS.get(SPLIT_ALIASES.get(key, key))
    if found is None:
        raise ConfigError(f"unknown split method {name!r}; use one of {', '.join(SPLIT_METHODS)}")
    return found


def cold_start_policy(value: object) -> ColdStart:
    """``value`` as a cold-start policy of :data:`COLD_START_POLICIES` (any case), or a ConfigError naming them.

    The one check of the policy, wherever it is given (``cold_start=``, ``--cold-start``,
    a configuration's ``[protocol] cold_start``).

    Returns
    -------
    ColdStart
        The policy's name.

    Examples
    --------
    >>> cold_start_policy("Fallback")
    'fallback'
    >>> cold_start_policy("popular")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: cold_start='popular' is not a cold-start policy; use one of empty, exclude, fallback
    """
    key = value.strip().lower() if isinstance(value, str) else value
    for name in COLD_START_POLICIES:
        if key == name:
            return name
    raise ConfigError(
        f"cold_start={value!r} is not a cold-start policy; use one of {', '.join(COLD_START_POLICIES)}",
        parameters=["cold_start"],
    )


def sampled_word(option: str, value: object, words: tuple[str, ...]) -> str:
    """``value`` as one of ``words`` (any case, ``_`` read as ``-``), or a one-line ConfigError naming ``option``.

    The one check of :data:`SAMPLING_SCHEMES`, :data:`SAMPLE_SHAPES` and
    :data:`SAMPLED_CORRECTIONS`, wherever the word is given.

    Returns
    -------
    str
        The word as it is written in ``words``.

    Examples
    --------
    >>> sampled_word("shape", "Per_User", SAMPLE_SHAPES)
    'per-user'
    >>> sampled_word("correction", "lsq", SAMPLED_CORRECTIONS)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: correction='lsq' is not known; use one of none, ls, bv, mapping, mle, mes
    """
    key = _key(value) if isinstance(value, str) else value
    for word in words:
        if key == word:
            return word
    raise ConfigError(f"{option}={value!r} is not known; use one of {', '.join(words)}", parameters=[option])


STUDY_PROTOCOLS: dict[str, str] = {
    "random": "a random share of each user's pairs (per-user holdout)",
    "loo": "each user's last pair (leave-last-out)",
    "temporal": "every pair first rated on or after one date (a global cut)",
    "rolling": "the last N spans of time, each tested after its past (the mean over the windows)",
}
"""The protocols of ``receval protocols-study --protocols`` (:mod:`receval.studies.protocols`), each in words."""
PROTOCOLS_STUDY_ALGORITHMS: tuple[str, ...] = ("popularity", "item-knn", "user-knn", "ease", "rp3beta", "hkv", "mf")
"""The recommenders the protocols study compares by default (fast built-ins, each with its defaults)."""
PROTOCOLS_STUDY_CORES: tuple[int, ...] = (0, 5, 10, 20)
"""The k-cores the protocols study filters to by default (0: the data as it is)."""
STUDY_VARIANTS: dict[str, str] = {
    "defaults": "each recommender with its default parameters",
    "tuned": "each recommender tuned on a validation part of its training part, the same budget for each",
}
"""How the protocols study sets each recommender's parameters (the ``variant`` column of its tables)."""
