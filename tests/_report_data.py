"""Result directories for the report tests and benchmark, written through the result store's API.

Values are random but seeded; system ``i`` has per-user metric values around ``0.1 * (i + 1)``,
so the last system is the best and differences between systems are clear.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from receval.experiment.store import ResultStore

METRICS = ("precision@5", "recall@5", "precision@10", "recall@10", "ndcg@10", "fallout@10")
GENERATE = {"n_users": 60, "n_items": 80, "n_ratings": 1500, "seed": 1}


def _meta(name: str, protocol: str, n_tasks: int, datasets: dict | None = None) -> dict:
    return {
        "name": name,
        "config_hash": f"hash-{name}",
        "config": {
            "name": name,
            "protocol": {"name": protocol},
            "datasets": datasets or {"synthetic": {"generate": GENERATE}},
        },
        "source": f"{name}.toml",
        "n_tasks": n_tasks,
        "receval_version": "0.1.0",
        "created": "2026-01-01T00:00:00+00:00",
    }


def _record(
    task_id: str, system: str, seed: int, protocol: str, dataset: str = "synthetic", status: str = "ok"
) -> dict:
    return {
        "label": f"{dataset}/{system} seed={seed}",
        "dataset": dataset,
        "recommender": system.split("(")[0],
        "algorithm": system.split("(")[0],
        "params": json.dumps({}),
        "fold": -1,
        "protocol": protocol,
        "options": json.dumps({"gamma": "wstd", "folds": 2}),
        "seed": seed,
        "status": status,
        "error": None if status == "ok" else "boom",
        "seconds": 0.5,
        "worker": "test:1",
        "versions": json.dumps({"receval": "0.1.0", "python": "3.11"}),
    }


def one_shot(
    root: Path,
    *,
    systems: int = 3,
    seeds: int = 2,
    users: int = 100,
    write: int | None = None,
    slices: bool = True,
    metrics: tuple[str, ...] = METRICS,
) -> Path:
    """A one-shot experiment of ``systems x seeds`` tasks; ``write`` < that number leaves it partial."""
    store = ResultStore(root)
    names = [f"sys{i}(k={i})" for i in range(systems)]
    n = systems * seeds
    store.open(_meta("oneshot", "one-shot", n))
    rng = np.random.default_rng(0)
    done = 0
    for i, name in enumerate(names):
        for seed in range(seeds):
            if write is not None and done >= write:
                return root
            tid = f"t{i:03d}s{seed}"
            per_user = []
            for metric in metrics:
                values = np.clip(rng.normal(0.1 * (i + 1), 0.05, users), 0, 1)
                per_user.append(
                    pd.DataFrame(
                        {
                            "user_index": np.arange(users, dtype=np.int32),
                            "user": [str(u) for u in range(users)],
                            "metric": metric,
                            "value": values,
                        }
                    )
                )
            pu = pd.concat(per_user, ignore_index=True)
            agg = pu.groupby("metric", sort=False)["value"].mean().reset_index()
            tables = {"aggregates": agg, "per_user": pu}
            if slices:
                groups = np.where(np.arange(users) < users // 2, "q1 (light)", "q2 (heavy)")
                tables["slices"] = pd.concat(
                    [pu.assign(dimension="user", slice="activity", group=groups[pu["user_index"]])], ignore_index=True
                )[["dimension", "slice", "group", "user_index", "user", "metric", "value"]]
            store.write_task(tid, _record(tid, name, seed, "one-shot"), tables)
            done += 1
    store.rebuild()
    return root


def cyclic(root: Path, *, systems: int = 4, rounds: int = 20) -> Path:
    """A cyclic experiment: one trajectory per system."""
    store = ResultStore(root)
    store.open(_meta("cyclic", "cyclic", systems))
    for i in range(systems):
        t = np.arange(1, rounds + 1)
        rate = 0.01 * (i + 1)
        traj = pd.DataFrame(
            {
                "round": t,
                "recall": rate * t / rounds,
                "fallout": (systems - i) * 0.002 * t / rounds,
                "precision": np.full(rounds, rate),
                "anti_precision": np.full(rounds, 0.05 - 0.01 * i),
                "recall_norm": np.full(rounds, rate * 2),
                "fallout_norm": np.full(rounds, 0.01 * i),
            }
        )
        final = traj.iloc[-1].drop("round")
        agg = pd.DataFrame({"metric": list(final.index), "value": final.to_numpy(dtype=float)})
        store.write_task(
            f"c{i}", _record(f"c{i}", f"bandit{i}()", 0, "cyclic"), {"aggregates": agg, "trajectories": traj}
        )
    store.rebuild()
    return root


def coherence(root: Path, *, ps: tuple[float, ...] = (0.1, 0.5, 0.9)) -> Path:
    """A coherence-split experiment with two recommenders."""
    store = ResultStore(root)
    store.open(_meta("coherence", "coherence-split", 2))
    for i, rec in enumerate(("IB", "MF")):
        rows = []
        for p in ps:
            rows.append(
                {
                    "recommender": rec,
                    "p": p,
                    "base_error": 0.95 + 0.01 * i,
                    "All-Diff": 5 * p,
                    "All-Easy": -5 * p,
                    "Diff-Diff": 8 * p,
                    "Easy-Easy": -8 * p,
                    "Avg": 0.1,
                    "rating_ratio": 1 - p * 0.8,
                    "best": "Easy-Easy",
                    "worst": "Diff-Diff",
                    "coverage": 1.0,
                    "n_undefined": 0,
                }
            )
        table = pd.DataFrame(rows)
        agg = pd.DataFrame({"metric": [f"Avg(p={p:g})" for p in ps], "value": [0.1] * len(ps)})
        store.write_task(
            f"h{i}", _record(f"h{i}", f"{rec}()", 0, "coherence-split"), {"aggregates": agg, "coherence": table}
        )
    store.rebuild()
    return root


def metaeval(root: Path) -> Path:
    """A meta-evaluation experiment: swap table/curves, discriminative power, incompleteness."""
    store = ResultStore(root)
    store.open(_meta("metaeval", "metaeval", 1))
    metrics = ["ab_ndcg@10", "alpha_ndcg@10", "ndcg@10"]
    swap = pd.DataFrame({"metric": metrics, "mode": "relevance", "tau": [0.9, 0.8, 0.7]})
    curves = pd.DataFrame(
        [
            {"mode": "relevance", "metric": m, "level": lv, "value": 1 - 0.1 * lv * (j + 1)}
            for j, m in enumerate(metrics)
            for lv in range(5)
        ]
    )
    power = pd.DataFrame(
        [{"metric": m, "test": t, "share": 0.5 + 0.1 * j} for j, m in enumerate(metrics) for t in ("ttest", "wilcoxon")]
    )
    robust = pd.DataFrame(
        [
            {"metric": m, "fraction": f, "tau": 1 - f * (j + 1) / 4, "tau_std": 0.05}
            for j, m in enumerate(metrics)
            for f in (0.1, 0.5, 0.9)
        ]
    )
    agg = pd.DataFrame({"metric": ["swap_tau[ab_ndcg@10,relevance]"], "value": [0.9]})
    store.write_task(
        "m0",
        _record("m0", "metaeval", 0, "metaeval"),
        {
            "aggregates": agg,
            "metaeval_swap": swap,
            "metaeval_swap_curves": curves,
            "metaeval_discriminative": power,
            "metaeval_incompleteness": robust,
        },
    )
    store.rebuild()
    return root
