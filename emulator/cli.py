"""The ``lbemu`` command line: a thin layer over `emulator.api` and `analysis`.

Exit status: 0 success, 2 bad input (one line naming the key), 1 anything else.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import RunError, ScenarioError, describe, show


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse prints usage and exits 2 on bad options; keep it to one line.
        raise ScenarioError(f"options: {message}")


def _parser() -> argparse.ArgumentParser:
    from .version import __version__

    parser = _Parser(prog="lbemu", description="Emulate dispatcher load balancing: delay and "
                                                "control messages per job, by kind.")
    parser.add_argument("--version", action="version", version=f"lbemu {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser("run", help="run a scenario, write results, print the comparison table")
    run.add_argument("scenario", help="YAML scenario file")
    run.add_argument("--out", help="results folder (default results/<name>/)")
    run.add_argument("--workers", type=int, help="worker processes (default: all cores)")
    run.add_argument("--dask", metavar="ADDRESS", help="run the tasks on a Dask cluster")
    run.add_argument("--replications", type=int, help="override replications")
    run.add_argument("--jobs", type=int, help="override run.jobs")
    run.add_argument("--seed", type=int, help="override the root seed")
    run.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                     help="override a dotted key, e.g. --set workload.load=0.8 (repeatable)")
    run.add_argument("--quiet", action="store_true", help="no progress bars")
    run.add_argument("--force", action="store_true",
                     help="discard stored results of a different scenario in the results folder")

    validate = commands.add_parser("validate", help="check a scenario and print the expanded runs")
    validate.add_argument("scenario")
    validate.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")

    commands.add_parser("policies", help="list the policies, their parameters and message cost")
    commands.add_parser("schema", help="print the JSON Schema of scenario files (for editors)")

    table = commands.add_parser("table", help="comparison table from a results folder")
    table.add_argument("dir")
    table.add_argument("--metric", action="append", help="metric column (repeatable)")
    table.add_argument("--rows", action="append", metavar="KEY",
                       help="policy or a swept key down the rows (repeatable; default policy)")
    table.add_argument("--cols", action="append", metavar="KEY",
                       help="policy or a swept key across (repeatable; default the main swept key)")
    table.add_argument("--diff", action="store_true",
                       help="paired differences against compare_to instead of the values")
    table.add_argument("--no-theory", action="store_true", help="leave out the theory rows")
    table.add_argument("--format", choices=("text", "markdown", "latex", "csv", "html"), default="text")
    table.add_argument("--width", type=int, metavar="COLUMNS",
                       help="text: widest line, wider tables print in blocks (default: the terminal's, "
                            "100 when not a terminal; 0: no limit)")
    table.add_argument("--layout", choices=("auto", "split", "single", "resize"), default="auto",
                       help="latex: one table if it fits the line width, else one per metric (auto); always one "
                            "per metric (split); one however wide (single); one scaled to the line width (resize)")
    table.add_argument("--split", dest="layout", action="store_const", const="split",
                       help="latex: same as --layout split")
    table.add_argument("--siunitx", action="store_true",
                       help="latex: siunitx S columns (\\usepackage{siunitx}) instead of plain aligned columns")

    frontier = commands.add_parser("frontier", help="per sweep point, the policies on the delay/messages "
                                                    "Pareto front")
    frontier.add_argument("dir")
    frontier.add_argument("--x", default="messages_per_job", metavar="METRIC",
                          help="metric across, lower is better (default messages_per_job)")
    frontier.add_argument("--y", default="mean_response", metavar="METRIC",
                          help="metric against it, lower is better (default mean_response)")
    frontier.add_argument("--within", metavar="MARGIN",
                          help="mark the fewest --x among the policies within this margin of the best --y "
                               "(10%% or 0.1)")
    frontier.add_argument("--reference", metavar="POLICY",
                          help="with --within: the margin is of this policy's --y (a registry name, e.g. jsq)")
    frontier.add_argument("--all", action="store_true", help="every policy, not only those on the front")
    frontier.add_argument("--format", choices=("text", "markdown", "latex", "csv", "html"), default="text")

    report = commands.add_parser("report", help="one self-contained HTML page: scenario, tables, figures")
    report.add_argument("dir")
    report.add_argument("--out", help="HTML file to write (default DIR/report.html)")

    plot = commands.add_parser("plot", help="figures from a results folder")
    plot.add_argument("dir")
    plot.add_argument("--format", choices=("png", "pdf", "svg"),
                      help="write each figure in this format only (default: PNG, with an SVG twin)")
    plot.add_argument("--size", metavar="W,H", help="width and height of every figure in inches, e.g. 3.5,2.6")
    plot.add_argument("--no-title", dest="title", action="store_false",
                      help="leave out the figures' titles (a paper's caption says them)")
    plot.add_argument("--metric", metavar="NAME",
                      help="only the figure of this summary.csv column against the swept variable, "
                           "e.g. mean_wait or p99_response")
    plot.add_argument("--figure", help="write only this figure (e.g. warmup); default: every figure of the results")
    return parser


def _overrides(pairs: list[str]) -> dict[str, Any]:
    from .scenario.yaml_input import load

    changes = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise ScenarioError(f"--set: expected KEY=VALUE, got '{pair}'")
        try:
            changes[key.strip()] = load(text, f"--set {key}")
        except ScenarioError:  # shown as a repr: a control character in it reads as e.g. \x07
            raise ScenarioError(f"--set {key}: expected a YAML value, got {show(text)}") from None
    return changes


def _scenario(args: argparse.Namespace) -> Any:
    from .scenario.reading import load_scenario

    scenario = load_scenario(args.scenario)
    changes = _overrides(args.set)
    for option, key in (("replications", "replications"), ("jobs", "run.jobs"), ("seed", "seed")):
        value = getattr(args, option, None)
        if value is not None:
            changes[key] = value
    return scenario.with_overrides(changes) if changes else scenario


def _run(args: argparse.Namespace) -> int:
    from .api import run

    scenario = _scenario(args)
    if args.workers is not None and args.workers < 1:
        raise ScenarioError(f"--workers: expected an integer >= 1, got {args.workers}")
    out = Path(args.out) if args.out else Path("results") / scenario.name
    executor = None
    if args.dask:
        try:
            from distributed import Client
        except ImportError:
            raise ScenarioError("--dask: needs the dask extra (pip install 'lbemu[dask]')") from None
        try:
            executor = Client(args.dask, timeout=15).get_executor()
        except (OSError, TimeoutError, ValueError) as exc:
            raise ScenarioError(f"--dask: cannot reach a scheduler at '{args.dask}' ({exc})") from None
    try:
        results = run(scenario, workers=args.workers, executor=executor, out=out,
                      progress=not args.quiet, force=args.force)
    except KeyboardInterrupt:
        print(f"lbemu: interrupted; finished tasks are stored in {out}: run the same command to resume",
              file=sys.stderr)
        return 130
    if not results.runs.empty:
        print(results.table())
        extra = "".join(f", {name}.csv" for name in ("occupancy", "total_jobs", "response_cdf")
                        if not getattr(results, name).empty)
        print(f"\nwrote {out}/runs.csv, summary.csv, scenario.yaml{extra}, store.sqlite (every finished task: "
              "the same command resumes an interrupted run)")
    if results.errors:
        print(f"lbemu: {len(results.errors)} task(s) failed (the others finished and are stored; "
              "a rerun retries only these):", file=sys.stderr)
        for task, error in results.errors:
            print(f"  {task}: {error}", file=sys.stderr)
        return 1
    return 0


def _validate(args: argparse.Namespace) -> int:
    scenario = _scenario(args)
    points = scenario.points()
    tasks = sum(len(point.policies) for point in points) * scenario.replications
    counts = sorted({len(point.policies) for point in points})
    # Every point runs the same policy list, so one count is the rule; say so plainly if not.
    policies = (f"{counts[0]} {'policy' if counts == [1] else 'policies'}" if len(counts) == 1
                else f"{counts[0]}-{counts[-1]} policies")
    run = scenario.run
    length = f"{run.jobs} jobs each, warm-up included and found by MSER-5" if run.warmup_jobs == "auto" \
        else f"{run.jobs} jobs each after {run.warmup_jobs} warm-up"
    print(f"{scenario.name}: {len(points)} point(s) x {policies} x {scenario.replications} "
          f"replication(s) = {tasks} task(s), {length}")
    for point in points:
        policies = ", ".join(policy.label for policy in point.policies)
        print(f"  point {point.index}: {point.describe()}: N={point.servers} load={point.load:g} "
              f"rate={point.rate:g} | {policies}")
    return 0


def _example_label(cls: Any) -> str:
    """The policy's label with its defaults; a policy of one's own whose label fails is listed all the same."""
    try:
        return str(cls.label(_defaults(cls)))
    except Exception as exc:  # the policy's own code: one policy must not stop the listing
        return f"none: label raised {describe(exc)}"


def _policies(args: argparse.Namespace) -> int:
    from .compiled import has_compiled_form
    from .policies import REGISTRY

    for name, cls in REGISTRY.items():
        engines = "simpy, compiled" if has_compiled_form(name) else "simpy"
        print(f"{name} (label e.g. {_example_label(cls)}): {cls.messages}; engines: {engines}")
        for field, info in cls.Config.model_fields.items():
            if field in ("name", "label"):
                continue
            default = info.default
            print(f"    {field} (default {default!r}): {info.description or ''}")
    return 0


def _defaults(cls: Any) -> Any:
    """The policy's default configuration, resolved at N = 10 (a default may be an expression in N)."""
    return cls.Config().resolve(10)


def _schema(args: argparse.Namespace) -> int:
    import json

    from .scenario.sweep import Scenario

    # pydantic writes JSON Schema draft 2020-12; saying so lets editors and validators pick the right rules.
    schema = {"$schema": SCHEMA_DRAFT, **Scenario.model_json_schema()}
    print(json.dumps(schema, indent=2))
    return 0


def _table(args: argparse.Namespace) -> int:
    from analysis.report import read_scenario
    from analysis.tables import comparison_table

    from .experiment.output import read_summary

    summary = read_summary(args.dir)
    print(comparison_table(summary, metrics=args.metric, format=args.format, rows=args.rows, cols=args.cols,
                           diff=args.diff, scenario=read_scenario(args.dir), theory=not args.no_theory,
                           width=args.width, layout=args.layout, siunitx=args.siunitx))
    return 0


def _frontier(args: argparse.Namespace) -> int:
    from analysis.frontier import frontier_table, margin
    from analysis.render import render

    from .experiment.output import read_summary

    summary = read_summary(args.dir)
    within = None if args.within is None else margin(args.within)
    print(render(frontier_table(summary, args.x, args.y, within, args.reference, args.all), args.format))
    return 0


def _report(args: argparse.Namespace) -> int:
    from analysis.report import write_report

    with _writing(args.dir):
        path = write_report(Path(args.dir), Path(args.out) if args.out else None)
    print(f"wrote {path}")
    return 0


@contextmanager
def _writing(folder: str) -> Iterator[None]:
    """An output that cannot be written is bad input: one line naming the file."""
    try:
        yield
    except OSError as exc:
        raise ScenarioError(f"DIR: expected a folder lbemu can write into, cannot write "
                            f"'{exc.filename or folder}' ({exc.strerror or exc})") from None


def _plot(args: argparse.Namespace) -> int:
    from analysis.plots import plot_folder

    from .experiment.output import read_summary

    size = _size(args.size)
    summary = read_summary(args.dir)
    with _writing(args.dir):
        paths = plot_folder(summary, Path(args.dir), fmt=args.format, size=size, title=args.title,
                            metric=args.metric, names=None if args.figure is None else [args.figure])
    for path in paths:
        print(f"wrote {path}" + ("" if args.format else f" and {path.with_suffix('.svg').name}"))
    return 0


def _size(text: str | None) -> tuple[float, ...] | None:
    """``--size W,H`` as two numbers, checked here so that a refusal names ``--size``."""
    if text is None:
        return None
    from analysis.canvas import sized

    try:
        size = tuple(float(part) for part in text.split(","))
    except ValueError:
        size = (math.nan,)  # not numbers: refused below, as any size out of range
    sized(size, key="--size", given=text)
    return size


SCHEMA_DRAFT = "https://json-schema.org/draft/2020-12/schema"

COMMANDS = {"run": _run, "validate": _validate, "policies": _policies, "schema": _schema,
            "table": _table, "frontier": _frontier, "plot": _plot, "report": _report}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:  # bare `lbemu`: what it can do, not only that a command is missing
        print(_parser().format_help(), end="", file=sys.stderr)
        return 2
    try:
        args = _parser().parse_args(argv)
        return COMMANDS[args.command](args)
    except ScenarioError as exc:
        for line in str(exc).splitlines():  # one line per mistake
            print(f"lbemu: error: {line}", file=sys.stderr)
        return 2
    except RunError as exc:
        print(f"lbemu: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("lbemu: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into e.g. head
        sys.stderr.close()
        return 0
