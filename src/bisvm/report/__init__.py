"""Self-contained HTML reports of a fit or a tuning run.

A report is one HTML file: inline CSS, tables, and figures embedded as base64 PNG
(``<img src="data:image/png;base64,...">``). It references nothing outside itself — no
scripts, fonts, style sheets or network — so it opens offline, can be mailed, and renders
the same in any browser (``tests/test_report.py`` screenshots it in headless Chromium).

:class:`Report` is the builder (:mod:`.html`); :func:`bilevel_report` and
:func:`regression_report` (:mod:`.bilevel`), :func:`model_report` and
:func:`tuning_report` (:mod:`.model`) assemble the standard reports of ``bisvm report``
and ``bisvm tune --report``; :mod:`.kernel` draws what the self-tuning kernel models
learned (the outer path on the cross-validated (C, γ) surface, the widths per feature).
"""

from __future__ import annotations

from .bilevel import (
    bilevel_report,
    kept_model,
    penalty_problems,
    refinement_messages,
    regression_report,
    thesis_scores_informative,
)
from .html import Report, figure_png
from .kernel import cv_surface, kernel_figures, outer_path
from .model import model_report, tuning_report

__all__ = ["Report", "bilevel_report", "regression_report", "model_report", "tuning_report",
           "figure_png", "kernel_figures", "cv_surface", "outer_path",
           "kept_model", "refinement_messages", "thesis_scores_informative",
           "penalty_problems"]
