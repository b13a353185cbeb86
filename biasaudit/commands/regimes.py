"""``biasaudit regimes {sam,eos}``: predicted regime boundaries and limits, with their formulas."""

from biasaudit.commands import register_dispatcher

__all__ = ["register", "register_dispatcher"]

TARGETS = ("regimes_sam", "regimes_eos")


def register(sub) -> None:
    """Add ``biasaudit regimes`` with its targets ``sam`` and ``eos`` (:data:`TARGETS`) to ``sub``."""
    register_dispatcher(sub, "regimes", "predicted regime boundaries / limits with their formulas", TARGETS)


def certified_mark(cert_json: dict, name: str) -> str:
    """`` [certified lo, hi]`` after a value with a proven enclosure, `` [not certified]`` where one was tried and
    failed or cannot be had, ``""`` where none was asked for (``cert_json``: ``Certificates.to_json()``)."""
    if name in cert_json.get("certified", {}):
        lo, hi = cert_json["certified"][name]
        return f"   [certified {lo!r}, {hi!r}]"
    if name in cert_json.get("not_certified", {}):
        return "   [not certified]"
    return ""


def certificate_lines(cert_json: dict) -> list[str]:
    """The text block of the enclosures: how each was proved, why each missing one is missing, and where a printed
    float value lies outside its enclosure."""
    from biasaudit.numerics.certified_boundaries import FLOAT_SLACK_REL

    lines = ["Certified (Arb ball arithmetic: a proven [lo, hi] around the exact value of each formula or root):"]
    for name, how in cert_json.get("certified_how", {}).items():
        lo, hi = cert_json["certified"][name]
        lines.append(f"  {name} in [{lo!r}, {hi!r}]: {how}")
    for name, reason in cert_json.get("not_certified", {}).items():
        lines.append(f"  {name}: {reason}")
    for name, gap in cert_json.get("float_outside_rel", {}).items():
        lines.append(f"  note: the float value of {name} lies {gap:.1e} (relative) outside its enclosure (the float "
                     "computation's rounding" + ("" if gap <= FLOAT_SLACK_REL else "; more than expected") + ")")
    return lines
