"""One import root (``biasaudit``) and layers that import downwards only.

The folders theory/, numerics/ and validation/ stay at the repository's root and install as
``biasaudit.theory``, ``biasaudit.numerics`` and ``biasaudit.validation`` (pyproject's package-dir map).
Checked here: the package list against the folders, the import graph of every layer module, the editable
install this test run uses, and — by building a wheel and installing it in a fresh virtual environment —
a normal install.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GENERIC_NAMES = ("plumbing", "theory", "numerics", "validation")

# bottom to top; a layer may import itself and every layer below it, never one above
LAYERS = (
    ("biasaudit.plumbing", ROOT / "plumbing"),
    ("biasaudit.theory", ROOT / "theory"),
    ("biasaudit.numerics", ROOT / "numerics"),
    ("biasaudit.validation", ROOT / "validation"),
)

IMPORT_CHECK = """
import importlib, sys
for name in {generic!r}:
    try:
        importlib.import_module(name)
    except ImportError:
        continue
    sys.exit(f"{{name}} is importable as a top-level name")
from biasaudit.numerics.heatmap import dominant_index_heatmap
from biasaudit.numerics.l2_boundaries import l2_sam_regime_boundaries
import biasaudit.plumbing, biasaudit.theory, biasaudit.numerics, biasaudit.validation, biasaudit.cli
assert abs(l2_sam_regime_boundaries([1.0, 2.0], 1.0).alpha_collapse - 0.5213212825997885) < 1e-9
h = dominant_index_heatmap([1.0, 2.0, 3.0], 0.3, [0.05, 0.5], [0.0, 0.5, 1.0], method="rk4")  # a numba kernel
print(biasaudit.numerics.__file__)
"""


def readme_layers(text: str) -> list[tuple[str, str]]:
    """(path, import name) of each row of the README's layout table, in order."""
    section = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].endswith("/") and cells[1].startswith("biasaudit"):
            rows.append((cells[0], cells[1]))
    return rows


def test_the_readme_layout_table_lists_the_layers_bottom_up():
    expected = [(f"{folder.relative_to(ROOT).as_posix()}/", package) for package, folder in LAYERS]
    assert readme_layers((ROOT / "README.md").read_text(encoding="utf-8")) == [*expected, ("biasaudit/", "biasaudit")]


def test_the_layers_sit_at_the_root_and_the_front_door_holds_no_layer():
    for _, folder in LAYERS:
        assert folder.parent == ROOT and (folder / "__init__.py").is_file()
        assert not (ROOT / "biasaudit" / folder.name).exists(), folder.name


def _declared_packages() -> tuple[list[str], dict[str, str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return config["packages"], config.get("package-dir", {})


def _folder_of(package: str, package_dir: dict[str, str]) -> Path:
    for prefix in sorted(package_dir, key=len, reverse=True):
        if package == prefix or package.startswith(prefix + "."):
            rest = package[len(prefix):].lstrip(".")
            return ROOT / package_dir[prefix] / Path(*rest.split(".")) if rest else ROOT / package_dir[prefix]
    return ROOT / Path(*package.split("."))


def test_declared_packages_are_exactly_the_package_folders():
    packages, package_dir = _declared_packages()
    assert all(p == "biasaudit" or p.startswith("biasaudit.") for p in packages)
    folders = {_folder_of(p, package_dir) for p in packages}
    assert all((f / "__init__.py").is_file() for f in folders), "a declared package has no __init__.py"
    on_disk = set()
    for top in ("biasaudit", *GENERIC_NAMES):
        on_disk |= {init.parent for init in (ROOT / top).rglob("__init__.py") if "__pycache__" not in init.parts}
    assert on_disk == folders, f"undeclared: {sorted(map(str, on_disk - folders))}"


def imported_modules(source: str, module: str) -> list[str]:
    """Every module ``source`` imports (absolute names; relative imports resolved against ``module``),
    including imports inside functions."""
    names = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.rsplit(".", node.level)[0]
                names.append(f"{base}.{node.module}" if node.module else base)
            else:
                names.append(node.module)
    return names


def layering_violations(source: str, module: str, layer: int) -> list[str]:
    """The imports of ``module`` (in ``LAYERS[layer]``) that reach a layer above it, the front door, or a
    generic top-level name."""
    allowed = tuple(name for name, _ in LAYERS[:layer + 1])
    bad = []
    for name in imported_modules(source, module):
        top = name.split(".")[0]
        if top in GENERIC_NAMES:
            bad.append(name)
        elif top == "biasaudit" and not any(name == a or name.startswith(a + ".") for a in allowed):
            bad.append(name)
    return bad


def _layer_modules():
    for layer, (package, folder) in enumerate(LAYERS):
        for path in sorted(folder.glob("*.py")):
            module = package if path.stem == "__init__" else f"{package}.{path.stem}"
            yield layer, module, path


@pytest.mark.parametrize("layer,module,path", list(_layer_modules()), ids=lambda v: str(v)[-40:])
def test_layer_modules_import_downwards_only(layer, module, path):
    assert layering_violations(path.read_text(encoding="utf-8"), module, layer) == []


def test_the_layering_check_catches_an_upward_import():
    theory = 1  # an upward import from theory into the front door, and a generic top-level name
    assert layering_violations("def f():\n    from biasaudit.ledger import jsonable\n", "biasaudit.theory.x",
                               theory) == ["biasaudit.ledger"]
    assert layering_violations("import numerics.flows\n", "biasaudit.theory.x", theory) == ["numerics.flows"]
    assert layering_violations("from ..numerics import flows\n", "biasaudit.theory.x", theory) == [
        "biasaudit.numerics"]
    assert layering_violations("from biasaudit.plumbing import jsonable\n", "biasaudit.theory.x", theory) == []


def _modules_below_the_front_door():
    """(module name, path) of every source file of plumbing/, theory/, numerics/ and validation/, subpackages
    included."""
    for package, folder in LAYERS:
        for path in sorted(folder.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            parts = [part for part in path.relative_to(folder).with_suffix("").parts if part != "__init__"]
            yield ".".join([package, *parts]), path


def test_no_layer_below_the_front_door_imports_matplotlib():
    """Plots live with the figures in the front door (``biasaudit.figures``); the layers return numbers."""
    plotting = [f"{module} imports {name}" for module, path in _modules_below_the_front_door()
                for name in imported_modules(path.read_text(encoding="utf-8"), module)
                if name.split(".")[0] == "matplotlib"]
    assert plotting == []
    assert len(list(_modules_below_the_front_door())) > 40  # the walk sees the layers' files
    # the same check finds the import where the plots are (inside a function, as everywhere here)
    common = ROOT / "biasaudit" / "figures" / "_common.py"
    assert "matplotlib" in imported_modules(common.read_text(encoding="utf-8"), "biasaudit.figures._common")


def test_no_module_anywhere_imports_a_generic_top_level_name():
    for path in [*ROOT.joinpath("biasaudit").rglob("*.py"), *ROOT.joinpath("tests").glob("*.py")]:
        names = imported_modules(path.read_text(encoding="utf-8"), "biasaudit.x")
        assert not [n for n in names if n.split(".")[0] in GENERIC_NAMES], path


def _run_import_check(python: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-c", IMPORT_CHECK.format(generic=GENERIC_NAMES)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_this_install_has_one_import_root(tmp_path):
    run = _run_import_check(sys.executable, tmp_path, {**os.environ, "BIASAUDIT_CACHE_DIR": str(tmp_path)})
    assert run.returncode == 0, run.stderr[-3000:]


def test_a_wheel_in_a_fresh_venv_has_one_import_root_and_works(tmp_path):
    """Build the wheel, check its top-level entries, install it (no dependencies) in a fresh virtual
    environment that sees this interpreter's third-party packages (not its editable biasaudit), and run
    imports, a numba kernel and the CLI from outside the checkout."""
    wheels, source = tmp_path / "wheels", tmp_path / "source"
    # build from a copy: setuptools writes build/ and *.egg-info beside the sources
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__",
                                                                 ".hypothesis", ".pytest_cache", "biasaudit-report"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(source)],
                           capture_output=True, text=True, timeout=900)
    if build.returncode != 0 and "Could not find a version that satisfies" in build.stderr:
        pytest.skip("no package index to fetch the build backend from")
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = wheels.glob("biasaudit-*.whl")
    with zipfile.ZipFile(wheel) as zf:
        tops = {name.split("/")[0] for name in zf.namelist()}
        assert {t for t in tops if not t.endswith(".dist-info")} == {"biasaudit"}
        for layer in GENERIC_NAMES:
            assert f"biasaudit/{layer}/__init__.py" in zf.namelist()

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = str(venv / "bin" / "python")
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # a bare path line adds the directory without running its .pth files (so no editable finder)
    shared = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(purelib, "third_party.pth").write_text("\n".join(sorted(shared)) + "\n")
    install = subprocess.run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index",
                              "-q", str(wheel)], capture_output=True, text=True, timeout=600)
    assert install.returncode == 0, install.stderr[-3000:]

    env = {**os.environ, "BIASAUDIT_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_CACHE_DIR": str(tmp_path / "nb")}
    run = _run_import_check(python, tmp_path, env)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().endswith(os.path.join("site-packages", "biasaudit", "numerics", "__init__.py"))
    cli = subprocess.run([str(venv / "bin" / "biasaudit"), "regimes", "sam", "--mu", "1,2", "--rho", "1", "--json"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert cli.returncode == 0 and '"alpha_collapse"' in cli.stdout, cli.stderr[-3000:]
