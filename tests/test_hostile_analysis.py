"""Analysis entry points given what they cannot use: one line naming what is missing, or the right output.

The ``python -m analysis.<module>`` commands on missing, empty and damaged
folders, on folders without what their table needs (a swept loss, a JSQ row, a
value), and the figures of `Results.plot` given an ``ax`` that is not where a
figure can be drawn. Results folders come from tiny SimPy runs, or are written
by hand from one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.scenarios import scenario_dict
from matplotlib.figure import Figure

import emulator

ROOT = Path(__file__).resolve().parents[1]


def _run(out: Path, policies: list[dict[str, Any]], sweep: dict[str, list[Any]], replications: int = 1,
         **network: Any) -> emulator.Results:
    data = scenario_dict(policies, servers=4, jobs=300, warmup=30, replications=replications, sweep=sweep,
                         arrivals={"kind": "poisson"}, service={"kind": "exponential", "mean": 1})
    data["run"]["engine"] = "simpy"
    if network:
        data["network"] = network
    return emulator.run(data, workers=1, out=out)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, emulator.Results]:
    """A folder without faults: random and JSQ at loads 0.5 and 0.8, one replication."""
    out = tmp_path_factory.mktemp("plain")
    return out, _run(out, [{"name": "random"}, {"name": "jsq"}], {"workload.load": [0.5, 0.8]})


# -- figures given an ax that is not where they can be drawn -----------------------------
def test_a_figure_given_as_ax_gets_the_whole_figure(plain: tuple[Path, emulator.Results]) -> None:
    results = plain[1]
    one_load = emulator.Results(results.runs, results.summary[results.summary["load"] == 0.5], results.scenario)
    for name, panels in (("response", 1), ("tradeoff", 2)):  # bars (one point), and two panels
        source = one_load if panels == 1 else results
        fig = Figure()
        assert source.plot(name, ax=fig) is fig
        assert len(fig.axes) == panels and fig.get_suptitle() != "" and fig.legends, name
    sub = Figure().subfigures(1, 2)[1]
    assert results.plot("messages_by_kind", ax=sub) is sub and len(sub.axes) == 2


def test_axes_one_per_panel(plain: tuple[Path, emulator.Results]) -> None:
    fig = Figure()
    axes = fig.subplots(1, 2)  # an array, as from pyplot.subplots
    assert plain[1].plot("tradeoff", ax=axes) is fig
    assert [ax.get_title() for ax in axes] == ["load = 0.5", "load = 0.8"]
    assert axes[-1].get_legend() is not None and fig.get_suptitle() == ""  # the caller's figure keeps its title


BAD_AX: dict[str, tuple[Callable[[], Any], str]] = {
    "a string": (lambda: "left", "expected matplotlib Axes, a sequence of Axes or an empty Figure, got str"),
    "a number": (lambda: 3, "got int"),
    "a figure with axes": (lambda: Figure().add_subplot().figure, "expected an empty Figure"),
    "too many axes": (lambda: list(Figure().subplots(1, 5)), "got 5"),
    "a list of strings": (lambda: ["left", "right"], "got one holding a str"),
}


@pytest.mark.parametrize("case", BAD_AX)
def test_an_ax_that_is_not_axes_is_refused_in_one_line(plain: tuple[Path, emulator.Results], case: str) -> None:
    make, says = BAD_AX[case]
    for name in plain[1].figures():
        with pytest.raises(emulator.ScenarioError, match=r"^ax: expected") as caught:
            plain[1].plot(name, ax=make())
        assert says in str(caught.value) and "\n" not in str(caught.value), (name, str(caught.value))
