"""The names of the input formats, apart from their readers (no pandas, no pyarrow).

The command line lists these names in its help; keeping them in a module of their own
lets ``receval --help`` print them without importing the readers
(:mod:`receval.data.loaders` reads data sets, :mod:`receval.data.tables` reads
evaluation tables).

>>> "movielens-100k" in FORMATS and "trec" in TABLE_FORMATS
True
"""

from __future__ import annotations

__all__ = ["FORMATS", "TABLE_FORMATS"]

FORMATS: dict[str, str] = {
    "movielens-100k": "MovieLens 100K folder: u.data (tab-separated), u.item (19 genre flags), u.genre, u.user",
    "movielens-1m": "MovieLens 1M folder: ratings.dat and movies.dat ('::'-separated), users.dat",
    "movielens-10m": "MovieLens 10M folder (ml-10M100K): ratings.dat and movies.dat ('::'-separated)",
    "movielens-20m": "MovieLens 20M folder: ratings.csv and movies.csv",
    "movielens-25m": "MovieLens 25M folder: ratings.csv and movies.csv",
    "movielens-latest": "MovieLens latest or latest-small folder: ratings.csv and movies.csv",
    "cm100k": "CM100k folder: ratings.txt (release) or data.txt (authors' copy); Known -> 'familiar'",
    "csv": "comma-separated file with a header (default columns user,item,rating[,timestamp])",
    "tsv": "tab-separated file with a header (default columns user,item,rating[,timestamp])",
    "parquet": "Parquet file (default columns user,item,rating[,timestamp])",
}
"""Format name -> what PATH must be. The names every command accepts."""

TABLE_FORMATS: dict[str, str] = {
    "csv": "comma-separated text with a header (or --no-header: user, item, rating|score, timestamp)",
    "tsv": "tab-separated text with a header (or --no-header)",
    "parquet": "Parquet file (ranx's Run/Qrels parquet too)",
    "trec": "TREC run (qid Q0 docid rank score tag) or qrels (qid 0 docid grade), no header",
    "ranx-json": "JSON {user: {item: score}} (ranx Run/Qrels .json, ir-measures/pytrec_eval dicts)",
    "recbole": "RecBole atomic file (.inter/.item): tab-separated, header name:type (user_id:token ...)",
    "movielens-100k": "u.data, u1.base, u1.test: tab-separated user, item, rating, timestamp, no header",
}
"""Table format name -> what the file must be (``--truth-format`` / ``--recs-format``)."""
