"""The HTML builder of the reports: :class:`Report` (inline CSS, tables, figures embedded
as base64 PNG) and :func:`figure_png`. A report references nothing outside itself -- no
scripts, fonts, style sheets or network -- so it opens offline, can be mailed, and renders
the same in any browser."""

from __future__ import annotations

import base64
import datetime as _dt
import html
import io
import math
import numbers

import numpy as np

__all__ = ["Report", "figure_png", "format_value", "confusion_rows"]

_CSS = """
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:0;
 background:#f6f7f9;color:#1d2430}
main{max-width:1100px;margin:0 auto;padding:24px 32px 48px;background:#fff;
 box-shadow:0 0 12px rgba(0,0,0,.06)}
h1{font-size:26px;margin:8px 0 4px;color:#16324f}
h2{font-size:19px;margin:30px 0 10px;padding-bottom:4px;border-bottom:2px solid #d8e1ea;
 color:#16324f}
h3{font-size:15px;margin:18px 0 6px}
p.sub{color:#5b6675;margin:0 0 14px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
caption{caption-side:top;text-align:left;font-weight:600;padding:4px 0}
th,td{border:1px solid #d5dbe3;padding:4px 10px;text-align:left;vertical-align:top}
th{background:#eef3f8}
td.num{text-align:right;font-variant-numeric:tabular-nums}
figure{margin:12px 0 22px;display:inline-block;vertical-align:top;max-width:100%}
figure img{max-width:100%;border:1px solid #e1e6ec}
figcaption{font-size:12px;color:#4a5563;max-width:700px}
pre{background:#f2f4f7;padding:8px 12px;font-size:12px;overflow-x:auto}
.note{color:#7a4b00;background:#fff6e0;padding:6px 10px;border-left:3px solid #e0a800}
footer{margin-top:30px;font-size:11px;color:#7b8694}
"""


def figure_png(obj, *, dpi=100):
    """PNG bytes of a matplotlib ``Figure`` or ``Axes`` (the figure is closed)."""
    import matplotlib.pyplot as plt

    fig = obj.figure if hasattr(obj, "figure") and not hasattr(obj, "savefig") else obj
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=dpi)
    plt.close(fig)
    return buf.getvalue()


def format_value(v):
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        v = float(v)
        if not math.isfinite(v):
            return str(v)
        return f"{v:.4g}" if (v == 0 or 1e-3 <= abs(v) < 1e5) else f"{v:.3e}"
    if isinstance(v, (list, tuple)) and len(v) <= 8:
        return ", ".join(format_value(x) for x in v)
    return str(v)


class Report:
    """Builder of a self-contained HTML report.

    Parameters
    ----------
    title : str
    subtitle : str, optional

    Attributes
    ----------
    parts : list of str
        The document's HTML fragments in order (a caller may reorder them before writing).
    n_figures : int

    Examples
    --------
    >>> r = Report("My run")
    >>> r.section("Summary")
    >>> r.table({"accuracy": 0.97})
    >>> html_text = r.to_html()
    """

    def __init__(self, title, subtitle=None):
        self.title = str(title)
        self.subtitle = subtitle
        self.parts = []
        self.n_figures = 0

    def section(self, text, level=2):
        """A heading (``level`` 2 or 3)."""
        level = 3 if level >= 3 else 2
        self.parts.append(f"<h{level}>{html.escape(str(text))}</h{level}>")

    def paragraph(self, text, *, note=False):
        """A paragraph of plain text (escaped); ``note=True`` highlights it."""
        cls = ' class="note"' if note else ""
        self.parts.append(f"<p{cls}>{html.escape(str(text))}</p>")

    def preformatted(self, text):
        self.parts.append(f"<pre>{html.escape(str(text))}</pre>")

    def table(self, rows, header=None, *, caption=None):
        """A table from a dict (two columns: name, value) or from a list of rows."""
        if isinstance(rows, dict):
            header = header or ("", "value")
            rows = [(k, v) for k, v in rows.items()]
        out = ["<table>"]
        if caption:
            out.append(f"<caption>{html.escape(str(caption))}</caption>")
        if header:
            out.append("<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
                       + "</tr>")
        for row in rows:
            cells = []
            for v in row:
                num = isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_))
                cls = ' class="num"' if num else ""
                cells.append(f"<td{cls}>{html.escape(format_value(v))}</td>")
            out.append("<tr>" + "".join(cells) + "</tr>")
        out.append("</table>")
        self.parts.append("".join(out))

    def figure(self, obj, caption="", *, dpi=100):
        """Embed a matplotlib Figure/Axes as a base64 PNG (closes the figure)."""
        data = base64.b64encode(figure_png(obj, dpi=dpi)).decode("ascii")
        cap = f"<figcaption>{html.escape(str(caption))}</figcaption>" if caption else ""
        self.parts.append(
            f'<figure><img alt="{html.escape(str(caption) or "figure")}" '
            f'src="data:image/png;base64,{data}">{cap}</figure>'
        )
        self.n_figures += 1

    def to_html(self):
        """The whole document as a string."""
        from bisvm import __version__

        when = _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
        sub = f'<p class="sub">{html.escape(str(self.subtitle))}</p>' if self.subtitle else ""
        body = "\n".join(self.parts)
        return (
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(self.title)}</title>"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<style>{_CSS}</style></head>\n<body><main>"
            f"<h1>{html.escape(self.title)}</h1>{sub}\n{body}\n"
            f"<footer>Written by bisvm {html.escape(__version__)} on {when}. "
            "Self-contained: all figures are embedded.</footer></main></body></html>\n"
        )

    def write(self, path):
        """Write the document (UTF-8); returns ``path``."""
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.to_html())
        return path


def confusion_rows(y_true, y_pred, class_names=None):
    """Header and rows of a confusion matrix; ``class_names`` (label -> the user's name)
    names the rows and columns."""
    labels = np.unique(np.r_[np.asarray(y_true), np.asarray(y_pred)])
    names = {}
    for lab in labels:
        names[lab] = lab
        for key, name in (class_names or {}).items():
            if key == lab:
                names[lab] = name
    rows = []
    for a in labels:
        rows.append([f"true {names[a]}"] + [int(np.sum((y_true == a) & (y_pred == b)))
                                            for b in labels])
    return [""] + [f"predicted {names[b]}" for b in labels], rows
