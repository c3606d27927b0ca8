"""A metric list read once: :class:`MetricList`, the (label, :class:`~receval.metrics.registry.Metric`) pairs of
an evaluation, made where the metric strings enter and passed down.

The one-shot entry points (:func:`receval.evaluation.evaluate`, :func:`receval.evaluation.evaluate_model`) and
sharded evaluation take metric strings or a :class:`MetricList`; given strings, each makes the list once, and
everything it calls receives that list instead of the strings. A library convention
(:func:`check_convention`) is checked when the list is made, and applied there to every metric that names none.

Examples
--------
>>> metrics = MetricList("recall@5, P_10, recall@5", convention="LensKit")
>>> metrics.labels, metrics.convention
(('recall@5', 'P_10'), 'lenskit')
>>> [str(spec) for _, spec in metrics]  # P_10 is trec_eval's spelling: its own convention
['recall@5(denominator=min)', 'precision@10']
>>> MetricList.of(metrics) is metrics
True
>>> import pickle; pickle.loads(pickle.dumps(metrics))
MetricList(['recall@5', 'P_10'], convention='lenskit')
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from receval.errors import ConfigError, MetricError, ReceValError
from receval.metrics._definition import Metric
from receval.metrics._parse import apply_convention, parse_metric, parse_metric_list
from receval.metrics.conventions import CONVENTION_NAMES, convention_name

__all__ = ["MetricList", "check_convention"]


def check_convention(convention: str | None) -> str | None:
    """The canonical name of a library convention (None: receval's own), else a ConfigError listing them.

    Returns
    -------
    str or None
        The name as :data:`receval.vocabulary.CONVENTION_NAMES` spells it, or None.

    Examples
    --------
    >>> check_convention("TREC_EVAL"), check_convention(None)
    ('trec_eval', None)
    >>> check_convention("pyterrier")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: convention='pyterrier' is not a library preset; use one of trec_eval, ranx, ...
    """
    if convention is None:
        return None
    try:
        return convention_name(convention)
    except ReceValError:
        raise ConfigError(
            f"convention={convention!r} is not a library preset; use one of {', '.join(CONVENTION_NAMES)}",
            parameters=["convention"],
        ) from None


class MetricList(Sequence[tuple[str, Metric]]):
    """Metrics read once: (label, parsed metric) pairs in the order given, each label once.

    Parameters
    ----------
    metrics
        Metric strings or :class:`~receval.metrics.registry.Metric` objects; a single string may
        list several separated by commas (commas inside parentheses kept).
    convention
        A library's name (:func:`check_convention`): its preset applied to every metric that
        does not name its own ``convention=``.

    Attributes
    ----------
    labels : tuple of str
        Each metric's label: the string as given (stripped), or a Metric's canonical string.
    convention : str or None
        The canonical name of the convention applied, None without one.

    Examples
    --------
    >>> metrics = MetricList(["precision@10", "mrr"])
    >>> len(metrics), metrics[1][0], metrics.subset(["mrr"]).labels
    (2, 'mrr', ('mrr',))
    >>> MetricList([])
    Traceback (most recent call last):
    ...
    receval.errors.MetricError: no metrics asked; give e.g. metrics=['ndcg@10', 'recall@10']
    """

    __slots__ = ("_pairs", "convention")

    def __init__(self, metrics: Sequence[str | Metric] | str, convention: str | None = None) -> None:
        self.convention = check_convention(convention)
        if isinstance(metrics, str):
            metrics = parse_metric_list(metrics)
        if not metrics:
            raise MetricError("no metrics asked; give e.g. metrics=['ndcg@10', 'recall@10']")
        pairs: dict[str, Metric] = {}
        for m in metrics:
            label = m.strip() if isinstance(m, str) else str(parse_metric(m))
            if label not in pairs:
                pairs[label] = parse_metric(m) if self.convention is None else apply_convention(m, self.convention)
        self._pairs = tuple(pairs.items())

    @classmethod
    def of(cls, metrics: MetricList | Sequence[str | Metric] | str, convention: str | None = None) -> MetricList:
        """``metrics`` as a :class:`MetricList`: read now, or as it is when it is one already.

        A list made already carries its convention: ``convention`` may only name the same one.

        >>> metrics = MetricList("ndcg@10", convention="trec_eval")
        >>> MetricList.of(metrics, "TREC_EVAL") is metrics
        True
        >>> MetricList.of(metrics, "ranx")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        receval.errors.ConfigError: convention='ranx' differs from the metric list's convention 'trec_eval'; ...
        """
        if not isinstance(metrics, MetricList):
            return cls(metrics, convention)
        if convention is not None and check_convention(convention) != metrics.convention:
            raise ConfigError(
                f"convention={convention!r} differs from the metric list's convention {metrics.convention!r}; "
                "give the convention once, when the MetricList is made",
                parameters=["convention"],
            )
        return metrics

    @property
    def labels(self) -> tuple[str, ...]:
        """The metrics' labels, in order."""
        return tuple(label for label, _ in self._pairs)

    def subset(self, labels: Iterable[str]) -> MetricList:
        """The metrics whose label is in ``labels``, in this list's order, with its convention (none read again)."""
        keep = set(labels)
        out = object.__new__(MetricList)
        out.convention = self.convention
        out._pairs = tuple((label, spec) for label, spec in self._pairs if label in keep)
        return out

    @overload
    def __getitem__(self, index: int) -> tuple[str, Metric]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[tuple[str, Metric]]: ...

    def __getitem__(self, index: int | slice) -> tuple[str, Metric] | Sequence[tuple[str, Metric]]:
        return self._pairs[index]

    def __len__(self) -> int:
        return len(self._pairs)

    def __iter__(self) -> Iterator[tuple[str, Metric]]:
        return iter(self._pairs)

    def __reduce__(self) -> tuple[type[MetricList], tuple[list[str], str | None]]:
        """Pickled as its labels and convention (a parsed metric holds read-only mappings): a worker process
        reads the same list again."""
        return MetricList, (list(self.labels), self.convention)

    def __repr__(self) -> str:
        return f"MetricList({list(self.labels)!r}, convention={self.convention!r})"
