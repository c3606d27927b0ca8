"""Library conventions by name: the parameter values with which a metric computes what a library computes.

Every convention on which implementations disagree is a parameter of the metric
(``recall@10(denominator=min)``, ``gini(denominator=n)``); a *preset* is the set of
those values one library uses, read from its source (the file and commit are kept
here and printed by docs/conventions.md). ``convention=NAME`` in a metric string
applies a preset; parameters written in the string win over it; the name is
case-insensitive. ``str(metric)`` shows what the string resolved to (the parameters
that differ from receval's defaults), ``metric.convention`` the preset applied.

A preset covers only the metrics its library has: ``gini(convention=trec_eval)`` is an
error naming the libraries that have a Gini index. The tie rule of a library (how it
orders equal scores) belongs to the run, not to a metric: :func:`preset_ties`.

Examples
--------
>>> from receval.metrics import apply_convention, parse_metric
>>> str(parse_metric("recall@10(convention=LensKit)"))
'recall@10(denominator=min)'
>>> str(parse_metric("ndcg@10(convention=trec_eval)")), str(parse_metric("ndcg_cut_10"))
('ndcg@10(graded=true)', 'ndcg@10(graded=true)')
>>> str(apply_convention("map@10", "recbole")), apply_convention("map@10", "recbole").convention
('map@10(denominator=min)', 'recbole')
>>> str(apply_convention("map@10(denominator=all)", "recbole"))  # written in the string: kept
'map@10'
>>> preset_ties("trec_eval"), preset_ties("RecBole")
('trec_eval', 'input')
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from receval.errors import MetricError
from receval.vocabulary import CONVENTION_NAMES

__all__ = [
    "CONVENTION_NAMES",
    "CONVENTION_PARAM",
    "LIBRARIES",
    "Library",
    "Preset",
    "TREC_LEVEL_PARAMS",
    "convention_name",
    "markdown_table",
    "preset_params",
    "preset_ties",
    "spelling_convention",
]

# the parameter of every metric string that names a library's convention
CONVENTION_PARAM = "convention"


@dataclass(frozen=True)
class Preset:
    """One metric as one library computes it: receval's parameter values and where they were read.

    ``spelling`` is the library's own name for the metric; ``source`` the file of the
    library's repository the values were read from; ``note`` what the values say.
    """

    spelling: str
    params: Mapping[str, Any]
    source: str
    note: str = ""


@dataclass(frozen=True)
class Library:
    """A library whose metric conventions receval reproduces: its repository, the commit read, its tie rule."""

    name: str
    repository: str
    commit: str
    ties: str
    metrics: Mapping[str, Preset]


def _p(spelling: str, source: str, note: str = "", **params: Any) -> Preset:
    return Preset(spelling, MappingProxyType(params), source, note)


def _library(name: str, repository: str, commit: str, ties: str, **metrics: Preset) -> Library:
    return Library(name, repository, commit, ties, MappingProxyType(metrics))


_LK = "src/lenskit/metrics/ranking/"
_RT = "rectools/metrics/"
_RB = "recbole/evaluator/metrics.py"
_RP = "recpack/metrics/"
_EL = "elliot/evaluation/metrics/"
_MS = "recommenders/evaluation/python_evaluation.py"
_CR = "cornac/metrics/ranking.py"
# Elliot's Popularity class (its evaluation objects' pop, read at 0126926): the head takes the most popular items
# until they hold 80% of the training interactions (pop_ratio), the crossing item included
_EL_TAIL = "short head: the most popular items holding 80% of the training interactions; the rest the long tail"

LIBRARIES: Mapping[str, Library] = MappingProxyType(
    {
        "trec_eval": _library(
            "trec_eval",
            "usnistgov/trec_eval",
            "f4253652c8efd0d86ddffd0d163cc0a0f813111a",
            "trec_eval",
            precision=_p("P_k", "m_P.c", "a list shorter than k counts its missing ranks as misses"),
            recall=_p("recall_k", "m_recall.c"),
            ndcg=_p(
                "ndcg_cut_k",
                "m_ndcg_cut.c",
                "gain = the judged grade, every grade > 0 (relevance_level is not read)",
                graded=True,
            ),
            map=_p("map, map_cut_k", "m_map.c, m_map_cut.c", "divides by all the relevant items"),
            mrr=_p("recip_rank", "m_recip_rank.c"),
            r_precision=_p("Rprec", "m_Rprec.c"),
            hit_rate=_p("success_k", "m_success.c"),
            num_ret=_p("num_ret", "m_num_ret.c"),
            num_rel=_p("num_rel", "m_num_rel.c"),
            num_rel_ret=_p("num_rel_ret", "m_num_rel_ret.c"),
            set_p=_p("set_P", "m_set_P.c"),
            set_recall=_p("set_recall", "m_set_recall.c"),
            set_f=_p("set_F", "m_set_F.c"),
            bpref=_p("bpref", "m_bpref.c", "a negative grade (−1) is unjudged"),
            iprec_at_recall=_p("iprec_at_recall_x", "m_iprec_at_recall.c"),
            gm_map=_p("gm_map", "m_gm_map.c"),
            rbp=_p(
                "rbp",
                "m_rbp.c, gain_init.c",
                "p = 0.9; gain = the grade, every grade > 0, divided by the query's top grade when above 1",
                p=0.9,
                graded=True,
                normalize=True,
            ),
            rbp_residual=_p(
                "rbp_resid",
                "m_rbp_resid.c",
                "p = 0.9; a negative grade (−1) is unjudged; 0 for a list without an unjudged item",
                p=0.9,
                tail="with_unjudged",
            ),
            unjudged=_p("unj_k", "m_unjudged.c", "not in the qrels or −1; divides by k"),
        ),
        "ranx": _library(
            "ranx",
            "AmenRa/ranx",
            "2cae52f00c2c15136a07d573027744109792604d",
            "input",
            precision=_p("precision@k", "ranx/metrics/precision.py"),
            recall=_p("recall@k", "ranx/metrics/recall.py"),
            f1=_p("f1@k", "ranx/metrics/f1.py"),
            hit_rate=_p("hit_rate@k", "ranx/metrics/hit_rate.py"),
            tp=_p("hits@k", "ranx/metrics/hits.py", "the mean, not the sum, over queries", agg="macro"),
            mrr=_p("mrr@k", "ranx/metrics/reciprocal_rank.py"),
            map=_p("map@k", "ranx/metrics/average_precision.py"),
            ndcg=_p("ndcg@k", "ranx/metrics/ndcg.py", "gain = the grade (ndcg_burges: 2^grade − 1)"),
            r_precision=_p("r-precision", "ranx/metrics/r_precision.py"),
            bpref=_p(
                "bpref",
                "ranx/metrics/bpref.py",
                "a negative grade is judged non-relevant",
                negative_grades="nonrelevant",
            ),
            rbp=_p("rbp.p", "ranx/metrics/rank_biased_precision.py", "gain = the grade"),
        ),
        "recbole": _library(
            "recbole",
            "RUCAIBox/RecBole",
            "7b02be5ec80a88310f2d04a27a82adfcbb5dc211",
            "input",
            precision=_p("Precision", _RB),
            recall=_p("Recall", _RB),
            hit_rate=_p("Hit", _RB),
            mrr=_p("MRR", _RB),
            map=_p("MAP", _RB, "divides by min(k, |positives|)", denominator="min"),
            ndcg=_p("NDCG", _RB, "binary gains; ideal DCG of min(k, |positives|) items", gain="binary"),
            auc=_p(
                "GAUC",
                _RB,
                "per user over the full ranking, every non-positive item a negative; weighted by positives",
                negatives="all",
                agg="micro",
            ),
            coverage=_p("ItemCoverage", _RB, "divides by n + 1: RecBole's num_items counts its [PAD] token", pad=True),
            novelty=_p("AveragePopularity", _RB, "mean training count of the recommended items"),
            arp=_p("AveragePopularity", _RB, "mean training count of the recommended items"),
            aplt=_p(
                "TailPercentage",
                _RB,
                "tail_ratio = 0.1 (its default): the 10% least counted training items, ties by item id",
                tail=0.1,
                tail_by="items",
                catalogue="train",
            ),
            entropy=_p("ShannonEntropy", _RB, "natural log, divided by the number of distinct items", per_item=True),
            gini=_p(
                "GiniIndex",
                _RB,
                "over the catalogue and RecBole's [PAD] item (n + 1 items, num_items), divided by n + 1",
                denominator="n",
                pad=True,
            ),
            tail_percentage=_p("TailPercentage", _RB),
            rmse=_p("RMSE", _RB, "over all predictions"),
            mae=_p("MAE", _RB, "over all predictions"),
        ),
        "lenskit": _library(
            "lenskit",
            "lenskit/lkpy",
            "3bd1c175d6dae4e30da906e4f986797f214d1fe8",
            "input",
            precision=_p(
                "Precision",
                _LK + "_pr.py",
                "divides by the (truncated) list length; an empty list is NaN",
                denominator="list",
                empty_list="skip",
            ),
            recall=_p("Recall", _LK + "_pr.py", "divides by min(n, |test|)", denominator="min"),
            hit_rate=_p("Hit", _LK + "_hit.py"),
            mrr=_p("RecipRank", _LK + "_recip.py"),
            map=_p(
                "AveragePrecision",
                _LK + "_map.py",
                "divides by min(|test|, list length); an empty list is NaN",
                denominator="min_list",
                empty_list="skip",
            ),
            ndcg=_p(
                "NDCG",
                _LK + "_dcg.py, " + _LK + "_weighting.py",
                "gain 1 per test item (gain=None); LogRankWeight: 1/log2(max(r, 2))",
                gain="binary",
                discount="clipped",
            ),
            gini=_p(
                "ListGini", _LK + "_gini.py, src/lenskit/stats.py", "over the catalogue, divided by n", denominator="n"
            ),
            diversity=_p(
                "ILS",
                _LK + "_ils.py",
                "ILS is the similarity, 1 − diversity: unit-normalised category vectors; one item: ILS 1",
                similarity="aspect_cosine",
                single_item=0,
            ),
            rbp=_p(
                "RBP", _LK + "_rbp.py", "patience 0.85, binary gains, normalised by 1/(1 − p)", p=0.85, gain="binary"
            ),
            rmse=_p("RMSE", "src/lenskit/metrics/predict.py", "the global value of AvgErrorAccumulator"),
            mae=_p("MAE", "src/lenskit/metrics/predict.py", "the global value of AvgErrorAccumulator"),
        ),
        "rectools": _library(
            "rectools",
            "MobileTeleSystems/RecTools",
            "41a5a639a78bd07fa313d12b5d39bc140199c5f5",
            "input",
            precision=_p("Precision", _RT + "classification.py"),
            r_precision=_p("Precision(r_precision=True)", _RT + "classification.py", "r_precision@k"),
            recall=_p("Recall", _RT + "classification.py"),
            f1=_p("F1Beta", _RT + "classification.py", "beta=1 by default, as here"),
            hit_rate=_p("HitRate", _RT + "classification.py"),
            map=_p("MAP", _RT + "ranking.py", "divide_by_k=False by default; divide_by_k=True: denominator=k"),
            mrr=_p("MRR", _RT + "ranking.py"),
            ndcg=_p(
                "NDCG",
                _RT + "ranking.py",
                "binary gains; divide_by_achievable=False: the ideal DCG of k relevant items (log_base cancels)",
                gain="binary",
                ideal="full",
            ),
            novelty=_p(
                "MeanInvUserFreq, AvgRecPopularity",
                _RT + "novelty.py, " + _RT + "popularity.py",
                "MIUF is form=self_information, unsmoothed; AvgRecPopularity(normalize=True): normalised=true",
                smoothed=False,
            ),
            diversity=_p("IntraListDiversity", _RT + "diversity.py", "a list without pairs scores 0", single_item=0),
            coverage=_p("CatalogCoverage", _RT + "catalog.py", "normalize=True (by default a count)"),
            arp=_p(
                "AvgRecPopularity",
                _RT + "popularity.py",
                "training interactions of each item; normalize=True divides by all of them (normalize=true)",
            ),
        ),
        "recpack": _library(
            "recpack",
            "LienM/recpack",
            "d42997736d0d5dfda5127a7690c732465aa03df3",
            "input",
            precision=_p("PrecisionK", _RP + "precision.py"),
            recall=_p("RecallK", _RP + "recall.py", "CalibratedRecallK: denominator=min (calibrated_recall@k)"),
            ndcg=_p("NDCGK", _RP + "dcg.py", "binary gains; ideal DCG of min(K, |y_true|) items", gain="binary"),
            mrr=_p("ReciprocalRankK", _RP + "reciprocal_rank.py"),
            coverage=_p("CoverageK", _RP + "coverage.py"),
            diversity=_p(
                "IntraListDiversityK",
                _RP + "diversity.py",
                "Jaccard distance; 0 for one item and for an empty list",
                single_item=0,
                empty_list="zero",
            ),
            tp=_p("HitK", _RP + "hit.py", "the number of hits in the top K, the mean over users", agg="macro"),
        ),
        "elliot": _library(
            "elliot",
            "sisinflab/elliot",
            "fc27efedaddf4a57294db14b4bcaa5553a0015d2",
            "input",
            precision=_p("Precision", _EL + "accuracy/precision/precision.py"),
            recall=_p("Recall", _EL + "accuracy/recall/recall.py"),
            f1=_p("F1", _EL + "accuracy/f1/f1.py"),
            hit_rate=_p("HR", _EL + "accuracy/hit_rate/hit_rate.py"),
            mrr=_p("MRR", _EL + "accuracy/mrr/mrr.py"),
            map=_p("MAP", _EL + "accuracy/map/map.py", "the mean of P@i over every rank i ≤ k", average="ranks"),
            ndcg=_p(
                "nDCG",
                _EL + "accuracy/ndcg/ndcg.py, elliot/evaluation/relevance/relevance.py",
                "gain 2^(r − threshold + 1) − 1",
                gain="shifted_exponential",
            ),
            novelty=_p("ARP", _EL + "bias/arp/arp.py", "mean training popularity of the recommended items"),
            arp=_p("ARP", _EL + "bias/arp/arp.py", "popularity = the training users of the item"),
            aplt=_p("APLT", _EL + "bias/aplt/aplt.py", _EL_TAIL),
            aclt=_p("ACLT", _EL + "bias/aclt/aclt.py", _EL_TAIL),
            pop_reo=_p("PopREO", _EL + "bias/pop_reo/pop_reo.py", _EL_TAIL),
            pop_rsp=_p("PopRSP", _EL + "bias/pop_rsp/pop_rsp.py", _EL_TAIL),
            entropy=_p(
                "ShannonEntropy",
                _EL + "diversity/shannon_entropy/shannon_entropy.py",
                "bits; equal to entropy when every list has the same length",
                base=2,
            ),
        ),
        "msr": _library(
            "msr",
            "recommenders-team/recommenders",
            "b02c95e2b98b961f9943ce561bbb03f8dff2f41f",
            "input",
            precision=_p(
                "precision_at_k",
                _MS,
                "hits / k; the mean over the users common to the truth and the lists (an empty list is not scored)",
                empty_list="skip",
            ),
            recall=_p("recall_at_k", _MS, "hits / |truth|; users with a list", empty_list="skip"),
            ndcg=_p(
                "ndcg_at_k",
                _MS,
                "score_type=binary (the default): gain 1 per truth item; every truth user, an empty list 0; "
                "the log base cancels (score_type=raw: gain=linear)",
                gain="binary",
            ),
            map=_p(
                "map_at_k",
                _MS,
                "divides by min(|truth|, k); users with a list (its map, without _at_k: denominator=all)",
                denominator="min",
                empty_list="skip",
            ),
            r_precision=_p(
                "r_precision_at_k",
                _MS,
                "hits within the first min(R, k) ranks / R; the mean over the users with such a hit",
                depth="r",
                denominator="all",
                misses="skip",
            ),
            rating_auc=_p("auc", _MS, "roc_auc_score over the joined test pairs: every user's predictions pooled"),
            novelty=_p(
                "novelty",
                _MS,
                "−log2(popularity / training ratings), a never-rated item 0; the mean over every recommendation",
                form="choice",
                agg="micro",
            ),
            coverage=_p(
                "catalog_coverage", _MS, "distinct recommended items / distinct training items", catalogue="train"
            ),
            entropy=_p("distributional_coverage", _MS, "−Σ p log2 p of the recommendations' item shares", base=2),
            rmse=_p("rmse", _MS, "over the predicted test pairs (its inner join; receval refuses an unmatched pair)"),
            mae=_p("mae", _MS, "over the predicted test pairs (its inner join; receval refuses an unmatched pair)"),
        ),
        "cornac": _library(
            "cornac",
            "PreferredAI/cornac",
            "4db147def0c79c6b2ba5210457808d6041f0d0b3",
            "input",
            precision=_p("Precision", _CR, "tp / k (k = -1: / the list's length)"),
            recall=_p("Recall", _CR),
            f1=_p("FMeasure", _CR),
            hit_rate=_p("HitRatio", _CR),
            ndcg=_p("NDCG", _CR, "gain 2^hit − 1: binary; ideal DCG of min(k, |positives|) items", gain="binary"),
            ncrr=_p("NCRR", _CR, "ideal Σ 1/i over min(|positives|, the list's length) ranks"),
            mrr=_p("MRR", _CR, "over the whole ranking; a user without a positive ranked raises in Cornac, scores 0"),
            auc=_p(
                "AUC",
                _CR,
                "gt_neg=None: every scored item not positive is a negative; ties count 0 (a ranked list has none)",
                negatives="all",
            ),
            map=_p("MAP", _CR, "over the whole ranking (no k), divided by the positives ranked"),
            rmse=_p("RMSE", "cornac/metrics/rating.py", "over every test rating (weights=None)"),
            mae=_p("MAE", "cornac/metrics/rating.py", "over every test rating (weights=None)"),
        ),
    }
)
# trec_eval's names whose number is a parameter, not a cutoff: iprec_at_recall_0.10 = iprec_at_recall(recall=0.1)
TREC_LEVEL_PARAMS: Mapping[str, str] = MappingProxyType({"iprec_at_recall": "recall"})


def convention_name(name: str) -> str:
    """The canonical name of a library convention (case-insensitive, ``-`` read as ``_``).

    Returns
    -------
    str
        The convention's canonical name; an unknown name is a MetricError listing the known ones.

    Examples
    --------
    >>> convention_name("TREC-eval"), convention_name("LensKit")
    ('trec_eval', 'lenskit')
    >>> convention_name("pyterrier")
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: unknown convention 'pyterrier'; known: trec_eval, ranx, recbole, lenskit, ...
    """
    key = str(name).strip().lower().replace("-", "_")
    if key not in LIBRARIES:
        raise MetricError(f"unknown convention {name!r}; known: {', '.join(CONVENTION_NAMES)}")
    return key


def preset_ties(name: str) -> str:
    """The tie rule of a library: ``"trec_eval"`` (score descending, then document id descending) for
    trec_eval, ``"input"`` (the order of the run) for the others.

    Returns
    -------
    str
        ``"trec_eval"`` or ``"input"``.

    Examples
    --------
    >>> preset_ties("TREC_EVAL"), preset_ties("lenskit")
    ('trec_eval', 'input')
    """
    return LIBRARIES[convention_name(name)].ties


def preset_params(name: str, metric: str) -> Mapping[str, Any]:
    """The parameter values of metric ``metric`` (a canonical name) under library ``name``'s convention.

    Returns
    -------
    Mapping of str to Any
        The parameters the library fixes for the metric (read-only); a MetricError when the library has no such metric.

    Examples
    --------
    >>> dict(preset_params("lenskit", "recall"))
    {'denominator': 'min'}
    >>> preset_params("trec_eval", "gini")
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: trec_eval has no metric gini (its metrics: ...); ...
    """
    library = LIBRARIES[convention_name(name)]
    if metric not in library.metrics:
        others = [lib.name for lib in LIBRARIES.values() if metric in lib.metrics]
        where = f"convention={' or '.join(others)}" if others else "receval's own parameters"
        raise MetricError(
            f"{library.name} has no metric {metric} (its metrics: {', '.join(sorted(library.metrics)) or 'none yet'}); "
            f"drop the convention for {metric} or use {where}"
        )
    return library.metrics[metric].params


def spelling_convention(spelling: str) -> str | None:
    """The library whose own name for a metric ``spelling`` is (``P_k``, ``ndcg_cut_k``), if any.

    Returns
    -------
    str or None
        The library's convention name, or None when no library spells a metric so.

    Examples
    --------
    >>> spelling_convention("ndcg_cut_k"), spelling_convention("P_k"), spelling_convention("ndcg_burges_k")
    ('trec_eval', 'trec_eval', None)
    """
    key = spelling.strip().lower()
    for library in LIBRARIES.values():
        for preset in library.metrics.values():
            if key in (s.strip().lower() for s in preset.spelling.split(",")):
                return library.name
    return None


def markdown_table() -> str:
    """docs/conventions.md's tables: each library's repository, commit read and tie rule; then metric ×
    library × receval's parameter values, with the library's own name and the source files (linked at that commit).

    Returns
    -------
    str
        The Markdown text of both tables.

    Examples
    --------
    >>> markdown_table().splitlines()[0]
    '| library | repository | commit read | ties |'
    """
    lines = ["| library | repository | commit read | ties |", "| --- | --- | --- | --- |"]
    lines += [f"| {lib.name} | {lib.repository} | `{lib.commit}` | {lib.ties} |" for lib in LIBRARIES.values()]
    lines += [
        "",
        "| metric | library | library's name | parameter values | source file |",
        "| --- | --- | --- | --- | --- |",
    ]
    for metric in sorted({m for lib in LIBRARIES.values() for m in lib.metrics}):
        for lib in LIBRARIES.values():
            preset = lib.metrics.get(metric)
            if preset is None:
                continue
            values = ", ".join(f"`{key}={_text(v)}`" for key, v in sorted(preset.params.items())) or "defaults"
            note = f" ({preset.note})" if preset.note else ""
            links = ", ".join(
                f"[{path}](https://github.com/{lib.repository}/blob/{lib.commit}/{path})"
                for path in (part.strip() for part in preset.source.split(","))
            )
            lines.append(f"| `{metric}` | {lib.name} | `{preset.spelling}` | {values}{note} | {links} |")
    return "\n".join(lines)


def _text(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
