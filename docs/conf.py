"""Sphinx configuration of biasaudit's documentation (MyST Markdown pages, autodoc for the Python API).

Built in the test suite with warnings as errors (``tests/test_docs.py``); by hand:
``sphinx-build -W -b html docs docs/_build/html``.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

project = "biasaudit"
author = "the biasaudit developers"
extensions = ["myst_parser", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "specification_pages", "mathml_render"]
napoleon_google_docstring = False  # the API's docstrings are numpydoc: Parameters, Returns, Raises, Examples
myst_enable_extensions = ["dollarmath"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "**.ipynb_checkpoints", "tutorial.ipynb", "specification/_generated_*"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"
html_theme = "alabaster"
html_math_renderer = "mathml"  # formulas become MathML at build time: no MathJax, no CDN, readable offline
suppress_warnings = ["myst.header"]
