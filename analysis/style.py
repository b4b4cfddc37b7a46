"""One colour and one marker per policy, the same in every figure of every results folder.

The colour and marker of a policy are keyed by its registered name (``jsq``,
``sqd``, ...; ``summary.csv``'s ``policy_name``), so that JSQ is blue in the
quickstart and in the Zhou folder alike. Several labels of one name in a folder
(SQ(2) and JSQ(log N), JBT-2 and JBT-10) keep the name's colour in darker or
lighter shades, and take the next markers of `VARIANT_MARKERS`. The kinds of
control message have a fixed colour each too (`KIND_COLORS`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

PALETTE: dict[str, tuple[str, str]] = {
    # Seaborn's colour-blind safe "colorblind" palette without its pale yellow, which is
    # invisible on white; one marker each, so that policies are told apart in greyscale print.
    "random": ("#949494", "o"),
    "round_robin": ("#ca9161", "s"),
    "jsq": ("#0173b2", "^"),
    "sqd": ("#de8f05", "D"),
    "jiq": ("#029e73", "v"),
    "jbt": ("#6a3d9a", "P"),
    "threshold": ("#cc78bc", "X"),
    "jsq_push": ("#56b4e9", "*"),
    "jsq_sparse": ("#12711c", ">"),
    "lsq": ("#d55e00", "h"),
    "sqd_memory": ("#8c0800", "p"),
}
"""Registered policy name -> (colour, marker)."""

SPARE = (("#001c7f", "<"), ("#591e71", "d"), ("#3c3c3c", "H"), ("#b8850a", "8"), ("#00a2a8", "8"),
         ("#a6761d", "<"), ("#e7298a", "d"), ("#66a61e", "H"))
"""Colours and markers for policies outside `PALETTE` (plug-ins), in order of appearance in a folder."""

VARIANT_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "d", "H", "8")

KIND_COLORS = {"query": "#0173b2", "reply": "#56b4e9", "idle": "#029e73", "report": "#d55e00",
               "threshold": "#cc78bc", "update": "#6a3d9a"}
"""Message kind -> colour: query and reply in two blues (they come in pairs), the others apart."""

assert len({c for c, _ in PALETTE.values()}) == len(PALETTE), "one colour per policy"


@dataclass(frozen=True)
class Style:
    """Colour and marker of each policy label."""

    colors: dict[str, Any]
    markers: dict[str, str]


def policy_style(policies: Sequence[str], names: Mapping[str, str] | None = None) -> Style:
    """The style map of a folder, from its policy labels and their registered names.

    Parameters
    ----------
    policies : sequence of str
        Policy labels in order (``summary.csv``'s order).
    names : mapping, optional
        Label -> registered policy name (``summary.csv``'s ``policy_name``). A
        label without one is looked up as a name itself, lower case (``JSQ`` ->
        ``jsq``), else it takes the next `SPARE` style.

    Returns
    -------
    Style
        The first label of a name has that name's colour and marker in `PALETTE`;
        further labels of the same name get shades of its colour (darker, then
        lighter) and markers no other policy of the folder has.

    Examples
    --------
    >>> style = policy_style(["JSQ", "SQ(2)", "SQ(5)"], {"JSQ": "jsq", "SQ(2)": "sqd", "SQ(5)": "sqd"})
    >>> style.colors["JSQ"], style.markers
    ('#0173b2', {'JSQ': '^', 'SQ(2)': 'D', 'SQ(5)': 'o'})
    """
    names = names or {}
    family = {label: str(names.get(label, label.lower().replace(" ", "_"))) for label in policies}
    spare = iter(SPARE * (1 + len(policies) // len(SPARE)))
    base = {name: PALETTE.get(name) or next(spare) for name in dict.fromkeys(family.values())}
    colors: dict[str, Any] = {}
    markers: dict[str, str] = {}
    seen: dict[str, int] = {}
    used = {marker for _, marker in base.values()}
    others = [m for m in VARIANT_MARKERS if m not in used] or list(VARIANT_MARKERS)
    variants = 0
    sizes = {name: list(family.values()).count(name) for name in base}
    for label in policies:
        name = family[label]
        colour, marker = base[name]
        k = seen[name] = seen.get(name, -1) + 1
        if k == 0:
            colors[label], markers[label] = colour, marker
            continue
        # Variants: alternate darker and lighter, further from the base the more there are, in steps
        # small enough that the last stays short of black and white (seven JSQ-sparse variants: 0.15).
        step = (k + 1) // 2 * min(0.4, 0.6 / math.ceil((sizes[name] - 1) / 2))
        colors[label] = _shade(colour, -step if k % 2 else step)
        markers[label] = others[variants % len(others)]
        variants += 1
    return Style(colors, markers)


def _shade(colour: str, amount: float) -> str:
    """``colour`` mixed towards black (amount < 0) or white (amount > 0) by ``|amount|``."""
    rgb = [int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
    target = 1.0 if amount > 0 else 0.0
    mixed = [c + (target - c) * min(abs(amount), 0.8) for c in rgb]
    return "#" + "".join(f"{round(c * 255):02x}" for c in mixed)


def style_of(summary: pd.DataFrame, extra: Sequence[str] = ()) -> Style:
    """The style map of a summary's policies (and of ``extra`` labels), keyed by their registered names."""
    labels = list(dict.fromkeys([*summary["policy"].astype(str), *extra]))
    names = dict(zip(summary["policy"].astype(str), summary["policy_name"].astype(str), strict=True)) \
        if "policy_name" in summary else {}
    return policy_style(labels, names)
