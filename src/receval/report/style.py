"""One look for every receval figure: colour-blind-safe palette, fonts, grids, saving.

The palette is Okabe & Ito's (2008) eight colours, safe for the common colour-vision
deficiencies; with more than eight series the line style and marker change as well, so
no two series look alike. :func:`figure` opens a figure under the style (Agg backend,
no display needed); :func:`save` writes it as PNG and/or SVG atomically;
:func:`png_bytes` renders it for embedding in a report.

Examples
--------
>>> fig, axes = figure(1, 2)
>>> axes.shape
(1, 2)
>>> len(png_bytes(fig)) > 1000
True
>>> series_style(0)["color"] == OKABE_ITO[0], series_style(8)["linestyle"] != series_style(0)["linestyle"]
(True, True)
>>> styles = system_styles(["pop", "knn", "pop"])
>>> list(styles), styles["knn"] == series_style(1)
(['pop', 'knn'], True)
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from receval.atomic import atomic_write

__all__ = [
    "OKABE_ITO",
    "PAGE_WIDTH",
    "RC",
    "close_figure",
    "figure",
    "png_bytes",
    "save",
    "series_style",
    "styled",
    "svg_text",
    "system_styles",
]

#: Okabe–Ito colours (black last: it is used for reference lines).
OKABE_ITO: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#D55E00",  # vermillion
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#F0E442",  # yellow
    "#000000",  # black
)
#: The report page's usable width in inches at the figures' resolution (``RC["figure.dpi"]``): a figure
#: wider than this is scaled down in the browser, its text with it.
PAGE_WIDTH = 11.6
_LINESTYLES = ("-", "--", "-.", ":")
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")

#: matplotlib rc settings of the style.
RC: dict[str, Any] = {
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "svg.fonttype": "none",  # text stays text in SVG (searchable, small)
    "svg.hashsalt": "receval",  # deterministic SVG ids
}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def styled():
    """Context in which matplotlib uses receval's rc settings and colour cycle.

    Returns
    -------
    Yields
    ------
    module
        ``matplotlib.pyplot``, with the style's rc settings in force until the block ends.

    Examples
    --------
    >>> with styled() as plt:
    ...     plt.rcParams["font.size"], plt.rcParams["axes.prop_cycle"].by_key()["color"][0] == OKABE_ITO[0]
    (9.0, True)
    """
    plt = _pyplot()
    from cycler import cycler

    with plt.rc_context({**RC, "axes.prop_cycle": cycler(color=list(OKABE_ITO[:7]))}):
        yield plt


def series_style(i: int, *, markers: bool = True) -> dict[str, Any]:
    """Colour (cycling through seven Okabe–Ito colours), then line style and marker for series ``i``.

    Returns
    -------
    dict
        ``color`` and ``linestyle``, with ``marker`` and ``markersize`` when ``markers``: keywords for ``Axes.plot``.

    Examples
    --------
    >>> series_style(1)
    {'color': '#E69F00', 'linestyle': '-', 'marker': 's', 'markersize': 4}
    >>> series_style(8, markers=False)
    {'color': '#E69F00', 'linestyle': '--'}
    """
    style: dict[str, Any] = {"color": OKABE_ITO[i % 7], "linestyle": _LINESTYLES[(i // 7) % len(_LINESTYLES)]}
    if markers:
        style["marker"] = _MARKERS[i % len(_MARKERS)]
        style["markersize"] = 4
    return style


def system_styles(systems: Iterable[Any], together: Iterable[Iterable[Any]] = ()) -> dict[str, dict[str, Any]]:
    """``{system: series_style}`` in the order given (repeats ignored): one look per system.

    A report builds this once over all its systems and passes it to every figure, so a
    system looks the same in each of them; the key order is also the order systems are
    drawn in. Each ``together`` group (the systems of one table or figure) gets
    distinct colours where the palette allows: a system takes the first style whose
    colour no system of its groups has yet.

    Returns
    -------
    dict of str to dict
        Each distinct system (as a string) with its :func:`series_style`, in the order given.

    Examples
    --------
    >>> looks = system_styles(["a", "b", "c", "d", "e", "f", "g", "h", "x"], together=[["a", "h"], ["h", "x"]])
    >>> looks["h"]["color"] != looks["a"]["color"], looks["x"]["color"] != looks["h"]["color"]
    (True, True)
    """
    names = list(dict.fromkeys(str(s) for s in systems))
    peers: dict[str, set[str]] = {name: set() for name in names}
    for group in together:
        members = [str(s) for s in group]
        for name in members:
            peers.setdefault(name, set()).update(members)
    colours = len(OKABE_ITO) - 1  # series_style cycles the first seven
    chosen: dict[str, int] = {}
    for name in names:
        used = {chosen[p] % colours for p in peers[name] if p in chosen}
        taken = set(chosen.values())
        free = [i for i in range((len(chosen) + 1) * colours) if i not in taken]  # holds every colour
        chosen[name] = next((i for i in free if i % colours not in used), free[0])
    return {name: series_style(chosen[name]) for name in names}


def figure(nrows: int = 1, ncols: int = 1, *, width: float = 4.2, height: float = 3.2):
    """A new figure with a ``nrows x ncols`` array of axes, each about ``width x height`` inches.

    Returns
    -------
    tuple of (matplotlib.figure.Figure, numpy.ndarray)
        The figure (constrained layout) and its axes as a ``nrows x ncols`` array, even for one panel.

    Examples
    --------
    >>> fig, axes = figure(2, 3, width=2.0, height=1.5)
    >>> axes.shape, fig.get_size_inches().tolist()
    ((2, 3), [6.0, 3.0])
    """
    with styled() as plt:
        fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    fig.set_layout_engine("constrained")
    return fig, axes


def _render(fig, fmt: str) -> bytes:
    buf = io.BytesIO()
    with styled():
        fig.savefig(buf, format=fmt, metadata={"Software": "receval"} if fmt == "png" else {"Date": None})
    return buf.getvalue()


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes.

    Returns
    -------
    bytes
        The PNG file's content, rendered under the style.

    Examples
    --------
    >>> png_bytes(figure()[0])[:4]
    b'\\x89PNG'
    """
    return _render(fig, "png")


def svg_text(fig) -> str:
    """The figure as SVG text (fonts kept as text, no date: reproducible).

    Returns
    -------
    str
        The SVG document.

    Examples
    --------
    >>> svg_text(figure()[0]).lstrip().startswith("<?xml")
    True
    """
    return _render(fig, "svg").decode("utf-8")


def save(fig, stem: str | Path, formats: tuple[str, ...] = ("png", "svg"), *, close: bool = True) -> list[Path]:
    """Write ``stem.png`` / ``stem.svg`` atomically; returns the paths (closes the figure unless ``close=False``).

    Returns
    -------
    list of pathlib.Path
        The files written, one per format, in the order of ``formats``.

    Examples
    --------
    >>> import tempfile
    >>> [p.name for p in save(figure()[0], Path(tempfile.mkdtemp()) / "overview")]
    ['overview.png', 'overview.svg']
    """
    paths = []
    for fmt in formats:
        data = _render(fig, fmt)
        paths.append(atomic_write(Path(f"{stem}.{fmt}"), partial(Path.write_bytes, data=data)))
    if close:
        close_figure(fig)
    return paths


def close_figure(fig) -> None:
    """Release a figure's memory.

    Returns
    -------
    None

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> fig, _ = figure()
    >>> close_figure(fig)
    >>> plt.fignum_exists(fig.number)
    False
    """
    _pyplot().close(fig)
