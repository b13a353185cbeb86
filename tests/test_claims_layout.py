"""Claim folders mirror claim ids, and claim modules import each other in one direction only.

``sam.l2.alpha_collapse`` is defined under ``biasaudit/claims/sam/l2/``; each paper package lists exactly the
folders on disk (``FOLDERS``); ``biasaudit list --json`` says where each claim is defined; no claim module
imports another in a circle.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

from biasaudit import claims as claims_package
from biasaudit.registry import all_claims

ROOT = Path(__file__).resolve().parent.parent
CLAIMS_DIR = ROOT / "biasaudit" / "claims"


def _own(claim) -> bool:
    return claim.defined_in.startswith("biasaudit.")


def test_every_claim_lives_in_the_folder_its_id_names():
    wrong = []
    for claim in all_claims():
        if not _own(claim):
            continue  # a plugin's claims live in its own package
        a, b = claim.id.split(".")[:2]
        if not claim.module_path().startswith(f"biasaudit/claims/{a}/{b}/"):
            wrong.append((claim.id, claim.module_path()))
    assert wrong == []


def test_each_paper_lists_exactly_its_folders_on_disk():
    for paper in claims_package.PAPERS:
        module = __import__(f"biasaudit.claims.{paper}", fromlist=["FOLDERS"])
        on_disk = {p.parent.name for p in (CLAIMS_DIR / paper).glob("*/__init__.py")}
        assert set(module.FOLDERS) == on_disk, paper
        assert len(module.FOLDERS) == len(set(module.FOLDERS))
    assert {p.parent.name for p in CLAIMS_DIR.glob("*/__init__.py")} == set(claims_package.PAPERS)


def test_list_json_gives_each_claims_module_and_line():
    run = subprocess.run([sys.executable, "-m", "biasaudit", "list", "--json"], capture_output=True, text=True,
                         timeout=300, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)
    assert {r["id"] for r in rows} == {c.id for c in all_claims()}
    for row in rows:
        path = ROOT / row["module"]
        assert path.is_file(), row
        line = path.read_text(encoding="utf-8").splitlines()[row["line"] - 1]
        assert "Claim(" in line or "_claim(" in line or "claim(" in line.lower(), (row["id"], line)


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def _claim_modules() -> dict[str, Path]:
    return {_module_name(p): p for p in CLAIMS_DIR.rglob("*.py") if "__pycache__" not in p.parts}


def import_edges(source: str, module: str, known: set[str]) -> set[str]:
    """The claim modules ``source`` imports: ``from P import n`` reaches ``P.n`` when that is a module, else ``P``."""
    out = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module if not node.level else f"{module.rsplit('.', node.level)[0]}.{node.module}"
            for alias in node.names:
                target = f"{base}.{alias.name}"
                out.add(target if target in known else base)
    return out & known - {module}


def find_cycle(edges: dict[str, set[str]]) -> list[str]:
    """One import cycle of ``edges`` (a list of modules, first repeated last), or [] when there is none."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(edges):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_claim_modules_import_no_claim_module_in_a_circle():
    modules = _claim_modules()
    known = set(modules)
    edges = {name: import_edges(path.read_text(encoding="utf-8"), name, known) for name, path in modules.items()}
    assert find_cycle(edges) == []


@pytest.mark.parametrize("edges,expected", [
    ({"a": {"b"}, "b": {"a"}}, ["a", "b", "a"]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
])
def test_the_cycle_check_finds_a_circle(edges, expected):
    assert find_cycle(edges) == expected


def test_the_edge_reader_resolves_submodules_and_packages():
    known = {"biasaudit.claims.sam.torch", "biasaudit.claims.sam.torch.regimes"}
    src = "from biasaudit.claims.sam.torch import regimes\nfrom biasaudit.claims.sam.torch import CLAIMS\n"
    assert import_edges(src, "x", known) == known
