"""mkdocs hook: add the generated reference pages (CLI help, metric registry) to the site at build time."""

from __future__ import annotations

import sys
from pathlib import Path

from mkdocs.structure.files import File

sys.path.insert(0, str(Path(__file__).parent))
from gen_reference import generated


def on_files(files, config):
    """Append ``reference/cli.md`` and ``reference/metrics.md`` generated from the code."""
    for src_uri, content in generated().items():
        files.append(File.generated(config, src_uri, content=content))
    return files
