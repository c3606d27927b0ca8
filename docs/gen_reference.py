"""The generated reference pages: every ``receval <cmd> --help`` and the metric registry as a table.

``docs/hooks.py`` adds them to the site at build time (``reference/cli.md``,
``reference/metrics.md``), so they always match the code; ``python docs/gen_reference.py DIR``
writes them to ``DIR`` for reading without mkdocs.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent / "site-extra"


def _help(args: list[str]) -> str:
    from receval.cli import main

    buf = io.StringIO()
    argv0, sys.argv[0] = sys.argv[0], "receval"
    os.environ["COLUMNS"] = "100"
    os.environ["TERM"] = "dumb"
    os.environ["NO_COLOR"] = "1"
    with contextlib.redirect_stdout(buf):
        main([*args, "--help"])
    sys.argv[0] = argv0
    return "\n".join(line.rstrip() for line in buf.getvalue().strip().splitlines())


def cli_markdown() -> str:
    """Markdown of the top-level help and every command's help, in the app's order."""
    from receval.cli.app import app

    names = [c.name or c.callback.__name__ for c in app.registered_commands]
    for group in app.registered_groups:
        names.append(group.name)
        names += [f"{group.name} {c.name or c.callback.__name__}" for c in group.typer_instance.registered_commands]
    parts = [
        "# CLI reference",
        "",
        "Generated from the CLI by `python docs/gen_reference.py`; `receval COMMAND --help` prints the same.",
        "",
        "```text",
        _help([]),
        "```",
    ]
    for name in names:
        parts += ["", f"## receval {name}", "", "```text", _help(name.split()), "```"]
    return "\n".join(parts) + "\n"


def metrics_markdown() -> str:
    """Markdown table of every registered metric: kind, @k, parameters with defaults, needs, description."""
    from receval.metrics.registry import available_metrics, get_definition

    rows = [
        "# Metric reference",
        "",
        "Generated from the metric registry by `python docs/gen_reference.py`. A metric string is",
        "`name[@k][(param=value,...)]`, e.g. `ndcg@10(gain=exponential)`; the conventions are in",
        "[Concepts](../concepts.md#metric-conventions).",
        "",
        "| metric | kind | @k | parameters (defaults) | needs | description |",
        "|---|---|---|---|---|---|",
    ]
    for name in available_metrics():
        d = get_definition(name)
        params = ", ".join(f"`{k}={v}`" for k, v in d.defaults.items()) or "–"
        needs = [n for n in ("grades", "negatives", "train", "aspects", "predictions") if getattr(d, f"needs_{n}")]
        desc = d.description.replace("|", "\\|")
        rows.append(f"| `{name}` | {d.kind} | {d.k} | {params} | {', '.join(needs) or '–'} | {desc} |")
    return "\n".join(rows) + "\n"


def generated() -> dict[str, str]:
    """The generated pages (path inside docs/ -> markdown)."""
    return {"reference/cli.md": cli_markdown(), "reference/metrics.md": metrics_markdown()}


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else DOCS
    for name, text in generated().items():
        path = out / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
