"""What the figure modules share: matplotlib's pyplot on the Agg backend, one way to save a PNG, and the
size of a drawing per tier. matplotlib is imported when a figure is drawn, never when a module is imported."""

from __future__ import annotations

from pathlib import Path

__all__ = ["pyplot", "save", "size"]


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display; the same on every worker)."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path) -> Path:
    """Write ``fig`` as a PNG (110 dpi, tight box, no software stamp) and close it."""
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    pyplot().close(fig)
    return path


def size(tier: str, quick: int, full: int) -> int:
    """``quick`` at the quick tier, else ``full`` (grid sizes of the theory figures)."""
    return quick if tier == "quick" else full
