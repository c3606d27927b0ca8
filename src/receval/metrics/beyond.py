"""Beyond-accuracy metrics: coverage, concentration, diversity, novelty, serendipity.

The definitions follow Xiang Liang, *推荐系统实践* (Recommender System Practice), Posts &
Telecom Press, 2012, ch. 1.

Conventions:

- ``coverage[@k]`` = |∪_u top-k(u)| / |I| over the whole item id space (system level);
  ``pad=true`` counts one more item in |I|, never recommended: RecBole's ``num_items``
  counts its ``[PAD]`` token (item id 0), so its ItemCoverage and GiniIndex divide by n + 1.
- ``entropy[@k]`` and ``gini[@k]`` describe the popularity of the recommended items:
  p(i) = times item i appears in the top-k lists / all recommendations.
  H = −Σ p log p (natural log; ``base=2`` for bits); ``per_item=true`` divides H by the
  number of distinct recommended items (RecBole's ShannonEntropy). Gini
  G = 1/(n−1) Σ_j (2j − n − 1) p(i_j), items sorted by ascending p, over the whole
  catalogue (``items=catalogue``, never-recommended items count with p = 0) or, as in
  Xiang's code, only over the items that appear (``items=recommended``);
  ``denominator=n`` divides by n instead of n − 1 (RecBole's GiniIndex, LensKit's gini);
  ``pad=true`` adds RecBole's never-recommended ``[PAD]`` item to the catalogue (n + 1 items).
  ``gini_train`` is G1 of the training ratings' item popularity and
  ``matthew_effect@k`` = G2 − G1 (> 0: the recommender concentrates popularity).
- ``diversity@k`` (intra-list) = 1 − Σ_{i≠j} s(i, j) / (½|R|(|R|−1)) with a pluggable
  similarity ``similarity=aspect_jaccard`` (default), ``aspect_cosine``,
  ``rating_cosine`` (cosine of the items' training rating vectors) or any name
  registered with :func:`register_similarity`. Users with fewer than two items: NaN;
  ``single_item=0`` scores a one-item list 0 (RecTools, RecPack; LensKit's ILS of one
  item is 1, a diversity of 0). As in Xiang (2012) the sum runs over unordered pairs.
- ``novelty@k``: ``form=popularity`` mean number of training ratings of the
  recommended items (lower = more novel), ``log_popularity`` mean log(1 + that)
  (Xiang's book code), ``epc`` expected popularity complement mean(1 − pop(i)/|U|),
  ``self_information`` mean −log2 p(i) with p(i) = (pop(i) + 1) / (|U| + 1) so that
  never-rated items stay finite; |U| = users with a training rating. ``smoothed=false``
  takes ``self_information`` unsmoothed, −log2(pop(i)/|U|) with a never-rated item counted
  as rated once (RecTools' MeanInvUserFreq); ``normalised=true`` divides ``popularity`` by
  the number of training ratings (RecTools' ``AvgRecPopularity(normalize=True)``);
  ``choice`` is −log2(pop(i) / training ratings), the item choice model of Castells, Vargas
  & Wang (ECIR 2011), 0 for a never-rated item, as Microsoft Recommenders' ``novelty``, whose
  mean over every recommendation is ``agg=micro``.
- ``serendipity@k`` = (1/k) Σ_{i ∈ top k, i positive} (1 − mean_{j ∈ profile(u)} s(i, j)):
  relevant items that are unlike the user's training profile; users with an empty
  training profile count unexpectedness 1.

Examples
--------
>>> import numpy as np, scipy.sparse as sp
>>> from receval.metrics.registry import MetricInput, parse_metric
>>> truth = sp.csr_matrix((2, 4))
>>> data = MetricInput(np.array([[0, 1], [0, 2]]), truth)
>>> parse_metric("coverage").compute(data), round(parse_metric("entropy(base=2)").compute(data), 4)
(0.75, 1.5)
>>> parse_metric("gini(items=recommended)").compute(data)
0.25
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from receval.data.csr import as_scipy
from receval.data.stats import gini as _gini
from receval.errors import MetricError
from receval.metrics._definition import register_metric
from receval.metrics._input import MetricInput

if TYPE_CHECKING:
    import scipy.sparse as sp

__all__ = ["gini_index", "register_similarity", "pairwise_similarity", "SIMILARITIES"]

SimilarityFn = Callable[[MetricInput, np.ndarray, np.ndarray], np.ndarray]
SIMILARITIES: dict[str, SimilarityFn] = {}


def register_similarity(name: str) -> Callable[[SimilarityFn], SimilarityFn]:
    """Register ``fn(data, a, b) -> s`` giving s(a[j], b[j]) ∈ [0, 1] for item index arrays ``a``, ``b``.

    Returns
    -------
    callable
        A decorator that registers the function under ``name`` in :data:`SIMILARITIES` and returns it unchanged.

    Examples
    --------
    >>> @register_similarity("same_item_example")
    ... def _same(data, a, b):
    ...     return (a == b).astype(float)
    >>> pairwise_similarity(None, np.array([1, 2]), np.array([1, 3]), "same_item_example").tolist()
    [1.0, 0.0]
    >>> del SIMILARITIES["same_item_example"]
    """

    def decorator(fn: SimilarityFn) -> SimilarityFn:
        SIMILARITIES[name] = fn
        return fn

    return decorator


def pairwise_similarity(data: MetricInput, a: np.ndarray, b: np.ndarray, similarity: str) -> np.ndarray:
    """s(a[j], b[j]) with the named similarity.

    Returns
    -------
    numpy.ndarray of float64
        One similarity per pair ``(a[j], b[j])``; an unknown name is a MetricError listing the known ones.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> aspects = sp.csr_matrix(np.array([[1, 1, 0], [1, 0, 0], [0, 0, 1]]))  # items 0, 1, 2 by aspect
    >>> data = MetricInput(np.zeros((1, 0), dtype=int), sp.csr_matrix((1, 3)), aspects=aspects)
    >>> pairwise_similarity(data, np.array([0, 0]), np.array([1, 2]), "aspect_jaccard").tolist()  # 1/2 and 0/3
    [0.5, 0.0]
    """
    if similarity not in SIMILARITIES:
        raise MetricError(f"unknown similarity {similarity!r}; known: {', '.join(sorted(SIMILARITIES))}")
    return np.asarray(SIMILARITIES[similarity](data, a, b), dtype=np.float64)


def _aspect_codes(data: MetricInput) -> np.ndarray | sp.csr_matrix:
    if data.aspects is None:
        raise MetricError(
            "aspect similarities need item aspects: pass aspects= (an item,aspect table)", parameters=["aspects"]
        )
    cached = getattr(data, "_aspect_codes", None)
    if cached is None:
        import scipy.sparse as sp

        a = sp.csr_matrix(as_scipy(data.aspects))
        if a.shape[1] <= 63:  # pack each item's aspects into one int64 bit mask
            weights = np.left_shift(np.int64(1), np.arange(a.shape[1], dtype=np.int64))
            dense = (a.toarray() > 0).astype(np.int64)
            cached = dense @ weights
        else:
            cached = (a > 0).astype(np.float64).tocsr()
        data._aspect_codes = cached  # type: ignore[attr-defined]  # this module's cache on the input
    return cached


def _aspect_overlap(data: MetricInput, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """|A∩B|, |A|, |B| of the aspect sets of items a and b."""
    codes = _aspect_codes(data)
    if isinstance(codes, np.ndarray):
        ca, cb = codes[a], codes[b]
        return np.bitwise_count(ca & cb), np.bitwise_count(ca), np.bitwise_count(cb)
    inter = np.asarray(codes[a].multiply(codes[b]).sum(axis=1)).ravel()
    size = np.asarray(codes.sum(axis=1)).ravel()
    return inter, size[a], size[b]


@register_similarity("aspect_jaccard")
def aspect_jaccard(data: MetricInput, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|A∩B| / |A∪B| of the items' aspect sets (0 when both are empty)."""
    inter, na, nb = (x.astype(np.float64) for x in _aspect_overlap(data, a, b))
    union = na + nb - inter
    return np.divide(inter, union, out=np.zeros_like(inter), where=union > 0)


@register_similarity("aspect_cosine")
def aspect_cosine(data: MetricInput, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """|A∩B| / sqrt(|A||B|) of the items' aspect sets (0 when one is empty)."""
    inter, na, nb = (x.astype(np.float64) for x in _aspect_overlap(data, a, b))
    den = np.sqrt(na * nb)
    return np.divide(inter, den, out=np.zeros_like(inter), where=den > 0)


@register_similarity("rating_cosine")
def rating_cosine(data: MetricInput, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of the items' training rating vectors (over all training users), clipped to [0, 1]."""
    vectors = getattr(data, "_item_vectors", None)
    if vectors is None:
        if data.train_all is None:
            raise MetricError("similarity rating_cosine needs training ratings: pass train=", parameters=["train"])
        import scipy.sparse as sp

        items = sp.csr_matrix(as_scipy(data.train_all).T, dtype=np.float64)
        norms = np.sqrt(np.asarray(items.multiply(items).sum(axis=1)).ravel())
        vectors = sp.diags(np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)) @ items
        vectors = vectors.tocsr()
        data._item_vectors = vectors  # type: ignore[attr-defined]  # this module's cache on the input
    out = np.empty(len(a))
    step = 1_000_000
    for start in range(0, len(a), step):
        sl = slice(start, start + step)
        out[sl] = np.asarray(vectors[a[sl]].multiply(vectors[b[sl]]).sum(axis=1)).ravel()
    return np.clip(out, 0.0, 1.0)


# ------------------------------------------------------------------ concentration
def _top(data: MetricInput, k: int | None) -> np.ndarray:
    return data.rankings if k is None else data.rankings[:, :k]


def _recommended_counts(data: MetricInput, k: int | None) -> np.ndarray:
    top = _top(data, k)
    return np.bincount(top[top >= 0], minlength=data.n_items).astype(np.float64)


# the items coverage divides by: the whole catalogue, or the items with a training rating
COVERAGE_CATALOGUES = ("all", "train")


def gini_index(popularity: np.ndarray) -> float:
    """The Gini index of a popularity vector: 1/(n−1) Σ_j (2j − n − 1) p_j, p ascending and summing to 1.

    Returns
    -------
    float
        From 0 (equal popularity) to 1 (one item has it all); NaN for fewer than two items or no popularity.

    Examples
    --------
    >>> gini_index(np.array([1.0, 1.0, 1.0])), gini_index(np.array([0.0, 0.0, 5.0]))
    (0.0, 1.0)
    """
    p = np.asarray(popularity, dtype=np.float64)
    if len(p) < 2 or p.sum() <= 0:
        return float("nan")  # where receval.data.stats.gini says 0
    return _gini(p)


@register_metric(
    "coverage",
    direction="higher",
    bounds=(0, 1),
    kind="system",
    k="optional",
    defaults={"pad": False, "catalogue": "all"},
    choices={"catalogue": COVERAGE_CATALOGUES},
    description="Share of the catalogue recommended",
)
def coverage(data: MetricInput, k: int | None, pad: bool = False, catalogue: str = "all") -> float:
    """|∪_u top-k(u)| / |I|; ``pad=true``: / (|I| + 1), RecBole's ItemCoverage (its ``num_items`` counts [PAD]);
    ``catalogue=train``: / the items with a training rating (Microsoft Recommenders' ``catalog_coverage``).

    >>> import scipy.sparse as sp
    >>> data = MetricInput(np.array([[0], [0]]), sp.csr_matrix((2, 4)), train=sp.csr_matrix(np.eye(2, 4)))
    >>> coverage(data, 1), coverage(data, 1, pad=True), coverage(data, 1, catalogue="train")
    (0.25, 0.2, 0.5)
    """
    if catalogue not in COVERAGE_CATALOGUES:
        raise MetricError(f"coverage catalogue must be one of {', '.join(COVERAGE_CATALOGUES)}, got {catalogue!r}")
    items = data.n_items if catalogue == "all" else int(np.count_nonzero(data.item_popularity))
    return float(np.count_nonzero(_recommended_counts(data, k)) / (items + int(pad))) if items + pad else math.nan


@register_metric(
    "entropy",
    direction="higher",
    kind="system",
    k="optional",
    defaults={"base": "e", "per_item": False},
    description="Entropy of recommended popularity",
)
def entropy(data: MetricInput, k: int | None, base: str | float = "e", per_item: bool = False) -> float:
    """−Σ p(i) log p(i) over recommended items, p = share of all recommendations (``per_item``: / their number)."""
    counts = _recommended_counts(data, k)
    p = counts[counts > 0] / counts.sum() if counts.sum() > 0 else np.array([])
    h = float(-(p * np.log(p)).sum())
    if per_item:
        h = h / len(p) if len(p) else float("nan")
    return h if base == "e" else h / float(np.log(float(base)))


GINI_DENOMINATORS = ("n-1", "n")
GINI_ITEMS = ("catalogue", "recommended")
_GINI_CHOICES = {"items": GINI_ITEMS, "denominator": GINI_DENOMINATORS}


def _gini_of(counts: np.ndarray, items: str, denominator: str = "n-1", pad: bool = False) -> float:
    if pad and items != "catalogue":
        raise MetricError("gini pad=true adds RecBole's [PAD] item to the catalogue; it needs items=catalogue")
    if items == "catalogue":
        values = np.append(counts, 0.0) if pad else counts
    elif items == "recommended":
        values = counts[counts > 0]
    else:
        raise MetricError(f"gini items must be one of {', '.join(GINI_ITEMS)}, got {items!r}")
    if denominator not in GINI_DENOMINATORS:
        raise MetricError(f"gini denominator must be one of {', '.join(GINI_DENOMINATORS)}, got {denominator!r}")
    g = gini_index(values)
    n = len(values)
    return g * (n - 1) / n if denominator == "n" else g  # Σ_j (2j − n − 1) p_j divided by n instead of n − 1


@register_metric(
    "gini",
    direction="lower",
    bounds=(0, 1),
    kind="system",
    k="optional",
    defaults={"items": "catalogue", "denominator": "n-1", "pad": False},
    choices=_GINI_CHOICES,
    description="Gini of recommended-item popularity (G2)",
)
def gini(
    data: MetricInput, k: int | None, items: str = "catalogue", denominator: str = "n-1", pad: bool = False
) -> float:
    """G2: Gini index of how often each item is recommended (``pad=true``: over n + 1 items, RecBole's GiniIndex).

    >>> import scipy.sparse as sp
    >>> data = MetricInput(np.array([[0], [0]]), sp.csr_matrix((2, 4)))  # 4 items, one recommended
    >>> gini(data, 1, denominator="n"), round(gini(data, 1, denominator="n", pad=True), 12)
    (0.75, 0.8)
    """
    return _gini_of(_recommended_counts(data, k), items, denominator, pad)


@register_metric(
    "gini_train",
    direction=None,
    bounds=(0, 1),
    kind="system",
    k="none",
    defaults={"items": "catalogue", "denominator": "n-1"},
    choices=_GINI_CHOICES,
    needs_train=True,
    description="Gini of training item popularity (G1)",
)
def gini_train(data: MetricInput, k: None, items: str = "catalogue", denominator: str = "n-1") -> float:
    """G1: Gini index of the training data's item popularity (number of ratings)."""
    return _gini_of(data.item_popularity, items, denominator)


@register_metric(
    "matthew_effect",
    direction="lower",
    bounds=(-1, 1),
    kind="system",
    k="optional",
    defaults={"items": "catalogue", "denominator": "n-1"},
    choices=_GINI_CHOICES,
    needs_train=True,
    description="G2 − G1 (> 0: Matthew effect)",
)
def matthew_effect(data: MetricInput, k: int | None, items: str = "catalogue", denominator: str = "n-1") -> float:
    """Gini of the recommendations minus Gini of the training data."""
    return gini(data, k, items, denominator) - gini_train(data, None, items, denominator)


# --------------------------------------------------------------------- per list
@register_metric(
    "diversity",
    direction="higher",
    defaults={"similarity": "aspect_jaccard", "single_item": None, "empty_list": "skip"},
    choices={"empty_list": ("skip", "zero")},
    description="Intra-list diversity: 1 − mean pairwise similarity",
)
def diversity(
    data: MetricInput,
    k: int,
    similarity: str = "aspect_jaccard",
    single_item: float | None = None,
    empty_list: str = "skip",
) -> np.ndarray:
    """1 − Σ_{i<j} s(i, j) / (½|R|(|R|−1)) per user (NaN for lists shorter than 2; a one-item list
    ``single_item`` when given; an empty list 0 with ``empty_list="zero"``, as RecPack's
    ``IntraListDiversityK`` scores it)."""
    top = _top(data, k)
    n, width = top.shape
    first, second = np.triu_indices(width, 1)
    a, b = top[:, first].ravel(), top[:, second].ravel()
    ok = (a >= 0) & (b >= 0)
    sims = np.zeros(len(a))
    sims[ok] = pairwise_similarity(data, a[ok], b[ok], similarity)
    total = sims.reshape(n, len(first)).sum(axis=1)
    length = (top >= 0).sum(axis=1)
    pairs = length * (length - 1) / 2.0
    mean = np.divide(total, pairs, out=np.zeros(n), where=pairs > 0)
    values = np.where(pairs > 0, 1.0 - mean, np.nan)
    if single_item is not None:
        values[length == 1] = float(single_item)
    if empty_list == "zero":
        values[length == 0] = 0.0
    return values


NOVELTY_FORMS = ("popularity", "log_popularity", "epc", "self_information", "choice")
# novelty forms that measure popularity (lower = more novel); the others measure novelty itself
_POPULARITY_FORMS = ("popularity", "log_popularity")


def _novelty_parts(
    data: MetricInput, k: int, form: str = "popularity", smoothed: bool = True, normalised: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Per user: the novelty summed over the top k, and the items there (``agg=micro``: Σ / Σ over every
    recommendation, Microsoft Recommenders' novelty)."""
    per_item = _item_novelty(data, form, smoothed, normalised)
    top = _top(data, k)
    valid = top >= 0
    return np.where(valid, per_item[np.where(valid, top, 0)], 0.0).sum(axis=1), valid.sum(axis=1).astype(np.float64)


@register_metric(
    "novelty",
    direction=lambda params: "lower" if params["form"] in _POPULARITY_FORMS else "higher",
    defaults={"form": "popularity", "smoothed": True, "normalised": False},
    choices={"form": NOVELTY_FORMS},
    needs_train=True,
    micro=_novelty_parts,
    description="Novelty from training popularity of recommended items",
)
def novelty(
    data: MetricInput, k: int, form: str = "popularity", smoothed: bool = True, normalised: bool = False
) -> np.ndarray:
    """Mean popularity-based novelty of each user's top k (see the module notes for ``form``, ``smoothed`` and
    ``normalised``, which only ``self_information`` and ``popularity`` read)."""
    values, length = _novelty_parts(data, k, form, smoothed, normalised)
    return np.divide(values, length, out=np.full(len(length), np.nan), where=length > 0)


def _item_novelty(data: MetricInput, form: str, smoothed: bool, normalised: bool) -> np.ndarray:
    pop = data.item_popularity
    users = max(data.n_train_users, 1)
    # smoothed is read by form=self_information only, normalised by form=popularity only: a library's
    # preset sets both whatever the form
    if form == "popularity":
        per_item = pop / max(float(pop.sum()), 1.0) if normalised else pop
    elif form == "log_popularity":
        per_item = np.log1p(pop)
    elif form == "epc":
        per_item = 1.0 - pop / users
    elif form == "self_information":
        if smoothed:
            per_item = -np.log2((pop + 1.0) / (users + 1.0))
        else:
            per_item = -np.log2(np.maximum(pop, 1.0) / users)
    elif form == "choice":
        # the item choice model: p(i) = its share of all training ratings; a never-rated item scores 0
        share = pop / max(float(pop.sum()), 1.0)
        per_item = -np.log2(share, out=np.zeros_like(share), where=share > 0)
    else:
        raise MetricError(f"novelty form must be one of {', '.join(NOVELTY_FORMS)}, got {form!r}")
    return per_item


@register_metric(
    "serendipity",
    direction="higher",
    defaults={"similarity": "aspect_jaccard", "threshold": None},
    needs_train=True,
    description="Relevant and unexpected (dissimilar to the training profile) share of the top k",
)
def serendipity(
    data: MetricInput, k: int, similarity: str = "aspect_jaccard", threshold: float | None = None
) -> np.ndarray:
    """(1/k) Σ_{positive i in top k} (1 − mean similarity of i to the user's training items)."""
    if data.train is None:
        raise MetricError("serendipity needs the users' training profiles: pass train=", parameters=["train"])
    thr = data.threshold if threshold is None else float(threshold)
    top = _top(data, k)
    hits = data.positive_at(thr)[:, : top.shape[1]]
    rows, cols = np.nonzero(hits)
    profile = data.train
    sizes = np.diff(profile.indptr)
    unexpected = np.ones(len(rows))
    # expand each relevant recommendation against its user's profile, in bounded chunks
    pair_counts = sizes[rows]
    bounds = np.concatenate(([0], np.cumsum(pair_counts)))
    chunk = 2_000_000
    start = 0
    while start < len(rows):
        stop = max(int(np.searchsorted(bounds, bounds[start] + chunk, side="right")) - 1, start + 1)
        stop = min(stop, len(rows))
        r, c = rows[start:stop], cols[start:stop]
        counts = pair_counts[start:stop]
        if counts.sum():
            owner = np.repeat(np.arange(stop - start), counts)
            offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
            b = profile.indices[np.repeat(profile.indptr[r], counts) + offsets]
            a = np.repeat(top[r, c], counts)
            sims = pairwise_similarity(data, a, b, similarity)
            mean = np.bincount(owner, weights=sims, minlength=stop - start) / np.maximum(counts, 1)
            unexpected[start:stop] = np.where(counts > 0, 1.0 - mean, 1.0)
        start = stop
    total = np.bincount(rows, weights=unexpected, minlength=data.n_users)
    return total / float(k)
