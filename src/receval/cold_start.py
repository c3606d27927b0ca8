"""Cold-start users: test users without a training rating, and the one policy for them.

A *cold* user is a user of the truth (at least one test rating) with no rating in the
training data. The policy (:data:`receval.vocabulary.COLD_START_POLICIES`, default
``"empty"``) is the same wherever it is given:

- ``empty``: a cold user without a list is scored as an empty list (every accuracy
  metric 0), as every user without a list is;
- ``exclude``: cold users are left out of the evaluation, with or without a list;
- ``fallback``: a cold user without a list gets the fallback list, the most-rated
  training items (:func:`fallback_items`: Popularity over the training data, every
  training rating counted, ties by item id as text), which needs no history of the user.

Every evaluation reports the number of cold users and of those without a list
(:class:`receval.evaluation.Conventions` ``users_cold`` and ``users_cold_without_list``);
:func:`describe` says it in words.

Examples
--------
>>> import numpy as np
>>> fallback_items(np.array([3, 0, 5, 3]), np.array(["a", "b", "c", "d"]), 3).tolist()
[2, 0, 3]
>>> describe("fallback", users_cold=2, users_cold_without_list=2, users_evaluated=5)
'cold users (no training rating): 2 of 5, 2 of them without a list and given the most-rated training items'
"""

from __future__ import annotations

import numpy as np

from receval.vocabulary import ColdStart

__all__ = ["describe", "fallback_items"]


def fallback_items(counts: np.ndarray, item_ids: np.ndarray, k: int) -> np.ndarray:
    """The fallback list: indices of the ``k`` items with the most training ratings, most first.

    Parameters
    ----------
    counts
        Training ratings per item (one per item index; 0 for items without any, which never enter the list).
    item_ids
        The items' ids (ties go by the id as text, ascending, so the list is the same in
        every id space: a training file read alone or a split of the whole data).
    k
        The list's length at most (shorter when fewer items have a training rating).

    Returns
    -------
    ndarray of int64
        Item indices, best first.

    Examples
    --------
    >>> fallback_items(np.array([1, 1, 0]), np.array([10, 9, 8]), 5).tolist()  # "10" < "9" as text
    [0, 1]
    """
    counts = np.asarray(counts)
    rated = np.flatnonzero(counts > 0)
    text = np.asarray(item_ids)[rated].astype(str)
    order = np.lexsort((text, -counts[rated]))
    return rated[order[: max(int(k), 0)]].astype(np.int64)


def describe(
    policy: ColdStart, *, users_cold: int | None, users_cold_without_list: int | None, users_evaluated: int
) -> str:
    """The cold users of an evaluation and what the policy did with them, in one line.

    ``users_evaluated`` is the number of users scored (after ``exclude`` left the cold ones
    out). Without training data cold users cannot be told apart: the line says so.

    Returns
    -------
    str
        E.g. ``'cold users (no training rating): 88 of 116, left out of the evaluation: 28 evaluated'``.

    Examples
    --------
    >>> describe("exclude", users_cold=88, users_cold_without_list=88, users_evaluated=28)
    'cold users (no training rating): 88 of 116, left out of the evaluation: 28 evaluated'
    >>> describe("empty", users_cold=None, users_cold_without_list=None, users_evaluated=9)
    'cold users: not known without training data (give the training data to count them)'
    """
    if users_cold is None:
        return "cold users: not known without training data (give the training data to count them)"
    head = "cold users (no training rating): "
    if policy == "exclude":
        total = users_evaluated + users_cold
        return f"{head}{users_cold:,} of {total:,}, left out of the evaluation: {users_evaluated:,} evaluated"
    head += f"{users_cold:,} of {users_evaluated:,}"
    without = users_cold_without_list or 0
    if policy == "fallback":
        return f"{head}, {without:,} of them without a list and given the most-rated training items"
    return f"{head}, {without:,} of them without a list and scored as empty lists"
