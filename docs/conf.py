"""Sphinx configuration of lbemu's documentation site (``sphinx-build -W -b html docs OUT``).

Pages are MyST Markdown (the how-to pages are the Markdown files the repository has always had),
the tutorial notebook is rendered from its stored outputs without running it, and the API pages
are generated from the numpydoc docstrings.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the package as checked out, installed or not

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

# Notebooks are shown as stored: the test suite runs the tutorial notebook, the site does not.
nb_execution_mode = "off"

myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 3  # links such as policies.md#your-own-policy resolve to the heading

# Unlabelled code blocks are shell sessions or plain text, not Python.
highlight_language = "text"
# Docstrings write `name` for an object: link it when Sphinx knows it.
default_role = "py:obj"

autodoc_typehints = "none"  # numpydoc's Parameters sections say the types in words
autodoc_member_order = "bysource"
numpydoc_show_class_members = False  # the autodoc directives choose the members
numpydoc_class_members_toctree = False

html_theme = "alabaster"
# Wide enough for the results tables, which have up to seven columns.
html_theme_options = {"page_width": "1240px", "sidebar_width": "250px"}
html_title = f"lbemu {version}"
html_static_path: list[str] = []
