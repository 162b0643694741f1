"""Sphinx configuration of the bisvm documentation site.

Build (fails on any warning)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Sphinx with numpydoc, autosummary, sphinx-gallery and the PyData theme: numpydoc is the
docstring standard of the SciPy stack bisvm belongs to, autosummary writes one page per
public name, sphinx-gallery executes the examples at build time and makes their figures,
and MyST keeps the guide pages in markdown. Nothing is fetched from the network.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(DOCS / "_ext"))
sys.path.insert(0, str(ROOT / "src"))

import bisvm  # noqa: E402

project = "bisvm"
author = "the bisvm developers"
copyright = "2026, the bisvm developers"
release = bisvm.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "bisvm_cli",
    "bisvm_benchmarks",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "dev", "Thumbs.db", ".DS_Store", "**.ipynb_checkpoints",
                    "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.json", "auto_examples/*.md5"]
templates_path = ["_templates"]


# autodoc / autosummary: one page per public name; numpydoc renders the sections and
# autosummary (through the class template) lists the methods a class defines itself.
autosummary_generate = True
autosummary_imported_members = True
# a module's page lists its __all__, not every name it imports
autosummary_ignore_module_all = False
autodoc_default_options = {"members": False, "inherited-members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False


def _bisvm_methods(cls):
    """Public methods of ``cls`` written in bisvm (its own or a bisvm base class's):
    the API pages list these, and leave the scikit-learn ones to scikit-learn."""
    out = []
    for name in dir(cls):
        # set_*_request are scikit-learn's metadata-routing methods, made per class
        if name.startswith("_") or (name.startswith("set_") and name.endswith("_request")):
            continue
        owner = next((c for c in cls.__mro__ if name in vars(c)), None)
        member = vars(owner).get(name) if owner is not None else None
        if (owner is not None and owner.__module__.startswith("bisvm")
                and not isinstance(member, property) and callable(getattr(cls, name, None))):
            out.append(name)
    return out


autosummary_context = {
    "bisvm_methods": {f"bisvm.{n}": _bisvm_methods(getattr(bisvm, n))
                      for n in bisvm.__all__ if inspect.isclass(getattr(bisvm, n))},
}
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False

# MathJax typesets the mathematics in the reader's browser; the build needs no network.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# sphinx-gallery: the scripts examples/plot_*.py run at build time; the other scripts in
# examples/ are command-line tools and stay out of the gallery.
EXAMPLES = ROOT / "examples"
HAVE_GALLERY = (EXAMPLES / "GALLERY_HEADER.rst").exists() or (EXAMPLES / "README.txt").exists()
if HAVE_GALLERY:
    extensions.append("sphinx_gallery.gen_gallery")
    sphinx_gallery_conf = {
        "examples_dirs": "../examples",
        "gallery_dirs": "auto_examples",
        "filename_pattern": r"/plot_",
        # matched against a bare file name in one place and a path in another
        "ignore_pattern": r"^(?!(.*/)?plot_[^/]*\.py$)",
        "within_subsection_order": "FileNameSortKey",
        "abort_on_example_error": True,
        "remove_config_comments": True,
        "matplotlib_animations": False,
        "image_scrapers": ("matplotlib",),
        "download_all_examples": False,
        "plot_gallery": "True",
        "reset_modules": ("matplotlib",),
        "show_memory": False,
        "first_notebook_cell": None,
    }
else:
    # without the gallery scripts the site still builds, with a page that says so
    (DOCS / "auto_examples").mkdir(exist_ok=True)
    (DOCS / "auto_examples" / "index.rst").write_text(
        "Examples\n========\n\nThe gallery is built from ``examples/plot_*.py`` and "
        "``examples/GALLERY_HEADER.rst``, which this checkout does not have.\n")

html_theme = "pydata_sphinx_theme"
html_title = f"bisvm {release}"
html_static_path = ["_static"]
html_css_files = ["bisvm.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 6,
    "icon_links": [],
    "navbar_end": ["navbar-icon-links"],
}
html_show_sourcelink = False
html_copy_source = False


def _drop_empty_notes_glob(app, docname, source):
    """The design-notes page includes ``docs/notes/*.md`` by a glob; a checkout with no
    note yet is valid, so the glob line is dropped there instead of warning."""
    if docname == "design_notes" and not any((DOCS / "notes").glob("*.md")):
        source[0] = source[0].replace("\nnotes/*\n", "\n")


def setup(app):
    app.connect("source-read", _drop_empty_notes_glob)
