r"""Mathematics written inside a claim's prose (titles, notes, reasons), shown as mathematics.

Claim prose writes powers and indices the way one types them, ``alpha_j^{2-L}`` or ``e^{mu_j tau}``. A
*script* is a name (letters, with at most one plain index: ``alpha_j``, ``c_L``) or a closing bracket followed
by ``^{...}`` or ``_{...}`` (``w~`` is w with a tilde). :func:`split_scripts` finds them; the report shows each as HTML with ``<sup>``/``<sub>`` and Greek
letters (:func:`prose_html`), the documentation as inline LaTeX that its build renders (:func:`script_tex`).
Everything else stays as written.
"""

from __future__ import annotations

import html
import re

__all__ = ["GREEK", "split_scripts", "script_tex", "prose_html"]

GREEK = {"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "eta": "η", "theta": "θ",
         "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ",
         "omega": "ω"}
_LETTERS = "A-Za-z\u0370-\u03ff"
_SCRIPT = re.compile(rf"((?<![A-Za-z0-9_\\{{])[{_LETTERS}]+(?:_[A-Za-z0-9]+)?~?|[)\]‖])((?:[\^_]\{{[^{{}}]*\}})+)")
_INDEX = re.compile(rf"([{_LETTERS}]+)_([A-Za-z0-9]+)")
_PART = re.compile(r"([\^_])\{([^{}]*)\}")
_NAME = re.compile(r"[A-Za-z]+")


def split_scripts(text: str) -> list[tuple[bool, str]]:
    """``text`` as (is a script, piece) pairs, in order.

    >>> split_scripts("blows up at alpha_j^{2-L} / mu_j")
    [(False, 'blows up at '), (True, 'alpha_j^{2-L}'), (False, ' / mu_j')]
    """
    out, start = [], 0
    for m in _SCRIPT.finditer(text or ""):
        if m.start() > start:
            out.append((False, text[start:m.start()]))
        out.append((True, m.group(0)))
        start = m.end()
    if start < len(text or ""):
        out.append((False, text[start:]))
    return out


def _greek_tex(text: str) -> str:
    return _NAME.sub(lambda m: f"\\{m.group(0)} " if m.group(0) in GREEK else m.group(0), text).replace("−", "-")


def script_tex(script: str) -> str:
    """One script as LaTeX: Greek names as commands, the Unicode minus as ``-``.

    >>> script_tex("e^{mu_j tau}")
    'e^{\\\\mu _j \\\\tau }'
    """
    m = _SCRIPT.fullmatch(script)
    base, scripts = m.group(1), m.group(2)
    base_tex = f"\\tilde{{{_greek_tex(base[:-1])}}}" if base.endswith("~") else _greek_tex(base)
    return base_tex + _greek_tex(scripts)


def _greek_html(text: str) -> str:
    text = _NAME.sub(lambda m: GREEK.get(m.group(0), m.group(0)), html.escape(text))
    return _INDEX.sub(r"\1<sub>\2</sub>", text)


def _base_html(base: str) -> str:
    if base.endswith("~"):  # w~: w with a tilde
        return _base_html(base[:-1]) + "\u0303"
    name, _, index = base.partition("_")
    return _greek_html(name) + (f"<sub>{_greek_html(index)}</sub>" if index else "")


def prose_html(text: str | None) -> str:
    """Prose as escaped HTML, each script as ``<sup>``/``<sub>`` with Greek letters.

    >>> prose_html("tau_j = alpha_j^{2-L} & more")
    'tau_j = α<sub>j</sub><sup>2-L</sup> &amp; more'
    """
    parts = []
    for is_script, piece in split_scripts(text or ""):
        if not is_script:
            parts.append(html.escape(piece))
            continue
        m = _SCRIPT.fullmatch(piece)
        scripts = "".join(f"<{'sup' if op == '^' else 'sub'}>{_greek_html(arg)}</{'sup' if op == '^' else 'sub'}>"
                          for op, arg in _PART.findall(m.group(2)))
        parts.append(_base_html(m.group(1)) + scripts)
    return "".join(parts)
