"""One colour and one marker per policy, shared by every figure of a results folder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p")


@dataclass(frozen=True)
class Style:
    """Colour and marker of each policy label."""

    colors: dict[str, Any]
    markers: dict[str, str]


def policy_style(policies: Sequence[str]) -> Style:
    """The style map of a folder, from its policy labels in order (``summary.csv``'s order).

    Colours come from seaborn's colour-blind safe "colorblind" palette (10
    colours; "husl" beyond that), markers from `MARKERS`, so that a policy is
    told apart by its marker too in greyscale print.

    Examples
    --------
    >>> style = policy_style(["JSQ", "SQ(2)"])
    >>> style.markers
    {'JSQ': 'o', 'SQ(2)': 's'}
    """
    import seaborn as sns

    palette = sns.color_palette("colorblind" if len(policies) <= 10 else "husl", len(policies))
    return Style(dict(zip(policies, palette, strict=True)),
                 {p: MARKERS[i % len(MARKERS)] for i, p in enumerate(policies)})
