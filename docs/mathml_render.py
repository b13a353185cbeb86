"""A small Sphinx extension: every formula becomes MathML when the page is built, so the documentation shows its
mathematics offline, with no script and no web font (browsers render MathML natively; the audit report does the
same).

It registers the HTML math renderer ``mathml`` (``html_math_renderer = "mathml"`` in ``conf.py``): inline math
(``$...$``, ``:math:``) and display math (``$$...$$``, ``.. math::``) are converted by ``latex2mathml`` (a pure
Python package, the docs extra of ``pyproject.toml``). The LaTeX stays in the page as the formula's ``alttext``
for screen readers and copying. A formula the converter cannot read fails the build (``-W``), never a page of
raw LaTeX.
"""

from __future__ import annotations

import html
import re

from docutils import nodes

__all__ = ["to_mathml", "setup"]

# commands the converter does not know, as ones it does (upright operator names)
_REWRITES = ((re.compile(r"\\arg\s*\\(max|min)\b"), r"\\mathrm{arg\\,\1}"), (re.compile(r"\\arg\b"), r"\\mathrm{arg}"))
_LEFT_OVER = re.compile(r"\\[A-Za-z]+")


def to_mathml(latex: str, display: bool) -> str:
    """``latex`` as one ``<math>`` element (``display="block"`` for display math), its source as ``alttext``.

    Raises ``ValueError`` when a command is left as text (the converter did not know it): a build with a
    formula shown as raw LaTeX fails."""
    from latex2mathml.converter import convert

    source = latex.strip()
    for pattern, replacement in _REWRITES:
        source = pattern.sub(replacement, source)
    mathml = convert(source, display="block" if display else "inline")
    left = _LEFT_OVER.findall(html.unescape(re.sub(r"<[^>]+>", " ", mathml)))
    if left:
        raise ValueError(f"formula {latex!r}: {', '.join(left)} not rendered (write it with commands latex2mathml "
                         "knows)")
    return mathml.replace("<math ", f'<math alttext="{html.escape(latex.strip(), quote=True)}" ', 1)


def _visit_inline(self, node):
    self.body.append(to_mathml(node.astext(), display=False))
    raise nodes.SkipNode


def _visit_block(self, node):
    latex = node.astext()
    number = node.get("number")
    self.body.append(self.starttag(node, "div", CLASS="math notranslate nohighlight"))
    if number:
        self.body.append(f'<span class="eqno">({number})</span>')
    self.body.append(to_mathml(latex, display=True))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    """Register the ``mathml`` HTML math renderer."""
    app.add_html_math_renderer("mathml", (_visit_inline, None), (_visit_block, None))
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
