"""Sphinx configuration of lbemu's documentation site (``sphinx-build -W -b html docs OUT``).

Pages are MyST Markdown, the tutorial notebook is stored without outputs and run while the site
is built (its tables and figures are those of the code as checked out), math is typeset by
MathJax, and the API pages are generated from the numpydoc docstrings.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the package as checked out, installed or not
# The notebook's kernel is another process: it imports the checkout too.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from emulator.version import __version__  # noqa: E402

project = "lbemu"
author = "lbemu developers"
copyright = "2026, lbemu developers"
release = version = __version__

extensions = [
    "myst_nb",  # MyST Markdown and notebooks (it includes myst_parser)
    "sphinx.ext.autodoc",
    "numpydoc",
]

# Only the site's sources: the build folder and files that are not pages stay out.
exclude_patterns = ["_build", "**.ipynb_checkpoints", "figures"]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}

# The tutorial notebook is stored without outputs and run at every build (a few seconds), in a
# temporary folder, so that the site shows what the code gives now; a failing cell fails the build.
nb_execution_mode = "force"
nb_execution_in_temp = True
nb_execution_timeout = 300
nb_execution_raise_on_error = True
nb_execution_show_tb = True

myst_enable_extensions = ["dollarmath", "amsmath", "deflist"]
myst_heading_anchors = 3  # links such as policies.md#your-own-policy resolve to the heading

# Unlabelled code blocks are shell sessions or plain text, not Python.
highlight_language = "text"
# Docstrings write `name` for an object: link it when Sphinx knows it.
default_role = "py:obj"

autodoc_typehints = "none"  # numpydoc's Parameters sections say the types in words
autodoc_member_order = "bysource"
numpydoc_show_class_members = False  # the autodoc directives choose the members
numpydoc_class_members_toctree = False

html_theme = "pydata_sphinx_theme"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    # "On this page" goes under the site's navigation, on the left: the article keeps the width
    # that a right-hand column would take, for tables of seven columns and figures of three panels.
    "secondary_sidebar_items": [],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"**": ["sidebar-nav-bs", "page-toc"], "index": []}  # the landing page: the whole width
html_title = f"lbemu {version}"
html_static_path = ["_static"]
html_css_files = ["lbemu.css"]

# Docstrings name the pages of this site by their path in the repository (``docs/results.md``,
# which reads right in a terminal's help()); on the site, such a path becomes a link to the page.
_PAGE = re.compile(r"(?<![`/\w])docs/([a-z0-9-]+)\.md(?:#[\w-]+)?")


def _link_pages(app: Any, what: str, name: str, obj: Any, options: Any, lines: list[str]) -> None:
    """Turn ``docs/<page>.md`` in a docstring into a link to that page of the site."""
    for i, line in enumerate(lines):
        lines[i] = _PAGE.sub(lambda m: f":doc:`{m.group(0)} </{m.group(1)}>`", line)


def _keep_intervals_whole(app: Any, doctree: Any, docname: str) -> None:
    """In table cells, join "5.741 ± 0.016" with no-break spaces: a narrow column wraps around it, not in it."""
    from docutils import nodes

    for entry in doctree.findall(nodes.entry):
        for text in list(entry.findall(nodes.Text)):
            if " ± " in text:
                text.parent.replace(text, nodes.Text(str(text).replace(" ± ", "\u00a0±\u00a0")))


def setup(app: Any) -> None:
    app.connect("autodoc-process-docstring", _link_pages)
    app.connect("doctree-resolved", _keep_intervals_whole)
