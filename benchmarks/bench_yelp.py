"""Yelp loading speed: ``receval.data.load(folder, "yelp")`` against Arrow's bare JSON-lines parse.

Generates a Yelp Open Dataset folder in Yelp's layout (``yelp_academic_dataset_review.json``:
one JSON object a line with ``review_id``, ``user_id``, ``business_id``, ``stars``,
``useful``, ``funny``, ``cool``, ``text``, ``date``; ``yelp_academic_dataset_business.json``
with ``business_id``, ``name``, ``city``, ``stars``, ``categories``), 22-character ids as
Yelp writes them and review texts of a few hundred characters (about 500 bytes a
review, as in the release), then times, alternating ``--repeat`` times and keeping the
best of each:

* the anchor: ``pyarrow.json.read_json`` of the review file with the four fields'
  types fixed and the other fields skipped (the parse alone: no checks, no ids, no dates);
* ``receval.data.load(folder, "yelp")`` (Interactions with aspects);
* ``receval.data.tables.read_table(folder, "truth", format="yelp", arrow=True)`` (what
  ``evaluate --truth-format yelp`` reads),

and prints each time and its ratio to the anchor.

Usage::

    python benchmarks/bench_yelp.py                    # 1,000,000 reviews (about 500 MB)
    python benchmarks/bench_yelp.py --reviews 100000   # smoke run
"""

from __future__ import annotations

import argparse
import json
import string
import tempfile
import time
from pathlib import Path

import numpy as np

ID_CHARS = np.array(list(string.ascii_letters + string.digits + "-_"))
CATEGORIES = ["Restaurants", "Pizza", "Italian", "Bars", "Nightlife", "Coffee & Tea", "Shopping", "Beauty & Spas",
              "Food", "Mexican", "Sandwiches", "Hotels & Travel", "Auto Repair", "Home Services"]  # fmt: skip


def _ids(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct 22-character ids drawn from Yelp's alphabet (letters, digits, ``-`` and ``_``)."""
    ids = ["".join(row) for row in ID_CHARS[rng.integers(0, len(ID_CHARS), (n, 22))]]
    return list(dict.fromkeys(ids))


def generate(folder: Path, reviews: int, seed: int = 0) -> None:
    """Write a Yelp-like folder: ``reviews`` reviews by about reviews/3.5 users of about reviews/20 businesses."""
    from receval.data.formats import YELP_BUSINESSES, YELP_REVIEWS

    rng = np.random.default_rng(seed)
    users = _ids(rng, max(1, reviews * 2 // 7))
    businesses = _ids(rng, max(1, reviews // 20))
    popularity = 1.0 / np.arange(1, len(businesses) + 1) ** 0.8
    words = ["good", "pizza", "service", '"great"', "slow", "staff", "friendly", "price", "again", "never"]
    texts = [json.dumps(" ".join(rng.choice(words, rng.integers(40, 90))) + "\n") for _ in range(1000)]
    with open(folder / YELP_BUSINESSES, "w") as fh:
        for b in businesses:
            chosen = rng.choice(CATEGORIES, rng.integers(0, 4), replace=False)
            categories = json.dumps(", ".join(chosen)) if len(chosen) else "null"
            fh.write(f'{{"business_id": "{b}", "name": "B", "city": "Tucson", "stars": 4.0, '
                     f'"categories": {categories}}}\n')  # fmt: skip
    who = rng.integers(0, len(users), reviews)
    what = rng.choice(len(businesses), reviews, p=popularity / popularity.sum())
    stars = rng.integers(1, 6, reviews)
    seconds = rng.integers(1_100_000_000, 1_640_000_000, reviews)
    review_ids = _ids(rng, reviews + reviews // 100)
    with open(folder / YELP_REVIEWS, "w") as fh:
        for n in range(reviews):
            date = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(seconds[n])))
            fh.write(f'{{"review_id": "{review_ids[n]}", "user_id": "{users[who[n]]}", "business_id": '
                     f'"{businesses[what[n]]}", "stars": {stars[n]}.0, "useful": 1, "funny": 0, "cool": 0, '
                     f'"text": {texts[n % 1000]}, "date": "{date}"}}\n')  # fmt: skip


def _anchor(folder: Path) -> float:
    import pyarrow as pa
    import pyarrow.json as pa_json

    from receval.data.formats import YELP_REVIEWS

    schema = pa.schema([("user_id", pa.string()), ("business_id", pa.string()), ("stars", pa.float64()),
                        ("date", pa.string())])  # fmt: skip
    start = time.perf_counter()
    table = pa_json.read_json(folder / YELP_REVIEWS, parse_options=pa_json.ParseOptions(
        explicit_schema=schema, unexpected_field_behavior="ignore"))  # fmt: skip
    assert table.num_rows
    return time.perf_counter() - start


def _load(folder: Path) -> float:
    from receval.data import load

    start = time.perf_counter()
    data = load(folder, "yelp")
    assert data.n_ratings and data.aspects is not None
    return time.perf_counter() - start


def _truth(folder: Path) -> float:
    from receval.data.tables import read_table

    start = time.perf_counter()
    assert read_table(folder, "truth", format="yelp", arrow=True).num_rows
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reviews", type=int, default=1_000_000, help="reviews generated (default 1M)")
    parser.add_argument("--repeat", type=int, default=2, help="timings of each; the best is reported")
    args = parser.parse_args()
    import pyarrow as pa

    import receval

    with tempfile.TemporaryDirectory(prefix="receval-bench-") as tmp:
        folder = Path(tmp)
        start = time.perf_counter()
        generate(folder, args.reviews)
        size = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
        print(f"generated {args.reviews:,} reviews, {size:,.0f} MB in {time.perf_counter() - start:.1f} s")
        print(f"pyarrow {pa.__version__}, receval {receval.__version__}")
        best = {"anchor": float("inf"), "load": float("inf"), "truth": float("inf")}
        for _ in range(args.repeat):  # alternate, keep the best: the machine is shared and noisy
            best["anchor"] = min(best["anchor"], _anchor(folder))
            best["load"] = min(best["load"], _load(folder))
            best["truth"] = min(best["truth"], _truth(folder))
        names = {"anchor": "pyarrow.json.read_json (anchor)", "load": "receval.data.load(folder, 'yelp')",
                 "truth": "read_table(folder, format='yelp')"}  # fmt: skip
        for which, seconds in best.items():
            ratio = "" if which == "anchor" else f"   ratio to the anchor {seconds / best['anchor']:.2f}"
            print(f"time   {names[which]:34s}: {seconds:7.2f} s{ratio}")


if __name__ == "__main__":
    main()
