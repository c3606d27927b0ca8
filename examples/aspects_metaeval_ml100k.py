"""Meta-evaluate αβ-nDCG and the baselines on MovieLens 100K with its genres (Parapar & Radlinski, RecSys 2021).

Six recommenders (random, popularity, item-kNN, user-kNN, biased MF, HKV) on a seeded
80/20 holdout; their top-10 lists and distorted copies (strengths 0.1, 0.3, 0.5) are
the runs of the three experiments of :mod:`receval.studies.metaeval`. Writes CSV
tables and PNG figures to ``--out`` and prints a summary. Skips cleanly without data.

Usage::

    python examples/aspects_metaeval_ml100k.py [--data ../shared/data/ml-100k] [--out metaeval-ml100k]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from receval.cli import main

METRICS = "ab_ndcg@10,alpha_ndcg@10,nerr_ia@10,nnrbp,p_ia@10,s_recall@10,s_rr@10,rbu@10,eu@10,ndcg@10,precision@10"
SYSTEMS = "random,popularity,item-knn,user-knn,mf,hkv"

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data" / "ml-100k"
    )
    parser.add_argument("--out", type=Path, default=Path("metaeval-ml100k"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    if not args.data.exists():
        print(f"MovieLens 100K not found at {args.data}; skipping (pass --data)")
        sys.exit(0)
    sys.exit(
        main(
            [
                "metaeval", "--data", str(args.data), "--format", "movielens-100k", "--metrics", METRICS,
                "--systems", SYSTEMS, "--out", str(args.out), "--seed", str(args.seed), "--threshold", "4",
                "--strengths", "0,0.1,0.3,0.5", "--fractions", "0.1,0.3,0.5,0.7,0.9", "--seeds", "3",
            ]
        )
    )  # fmt: skip
