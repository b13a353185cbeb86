"""The API reference is usable without the source: every public name of ``biasaudit`` and the types it returns
have numpydoc sections (Parameters, and Returns and Examples for functions), and the examples run."""

import doctest
import importlib
import inspect

import pytest

import biasaudit

# the layers' public modules documented so far: every function and class in their ``__all__``
LAYER_MODULES = tuple(f"biasaudit.{m}" for m in (
    "theory.eos", "theory.eos_model", "theory.eos_flow", "theory.eos_risk", "theory.eos_minimizers",
    "theory.eos_central_flow", "theory.formula", "theory.sam_gd", "theory.sam_fields", "theory.sam_l2",
    "theory.sam_linf",
    "numerics.tableau", "numerics.cache_guard", "numerics.eos_gd", "numerics.eos_sweep", "numerics.eos_central_flow",
    "numerics.eos_central_flow_ivp", "numerics.eos_flow_ode", "numerics.eos_mpmath", "numerics.flows",
    "numerics.filippov", "numerics.sam_discrete", "numerics.l2_reduction", "numerics.sam_mpmath", "numerics.l2_deep",
    "numerics.l2_boundaries", "numerics.heatmap", "numerics.heatmap_gd", "numerics.heatmap_rk4",
    "numerics.heatmap_reduction", "numerics.heatmap_discrete",
    "validation.decision", "validation.sam_ladder_stats", "validation.eos_stats", "validation.sam_config",
    "validation.sam_multipoint", "validation.eos_toy"))
# layer modules without a single example (every public function compiles numba kernels)
WITHOUT_DOCTESTS = tuple(f"biasaudit.{m}" for m in (
    "theory.eos", "numerics.l2_boundaries", "numerics.heatmap_reduction", "numerics.heatmap_discrete"))
# modules whose examples run here (keep them fast: each is a few seconds at most)
DOCTEST_MODULES = ("biasaudit.api", "biasaudit.audit.evidence_view", "biasaudit.audit.prose_math",
                   "biasaudit.plumbing.inputs", "biasaudit.plumbing.atomicio", "biasaudit.plumbing.cachedir",
                   "biasaudit.plumbing.jsonable") + tuple(m for m in LAYER_MODULES if m not in WITHOUT_DOCTESTS)
# functions documented without an example: each compiles a numba kernel on its first call or integrates at high
# precision (seconds); a plain reference beside it carries the example
WITHOUT_EXAMPLES = tuple(f"biasaudit.numerics.{n}" for n in (
    "eos_gd.gd_sweep", "eos_gd.gd_path", "eos_sweep.sweep_eos", "eos_sweep.measured_kink", "eos_sweep.kink_estimates",
    "eos_sweep.flow_fixed_point", "eos_sweep.flow_aligned_deviation", "eos_sweep.norm_path",
    "eos_central_flow.central_flow", "eos_central_flow.central_flow_curve", "flows.integrate_reduced_flow",
    "sam_discrete.run_sam", "l2_reduction.classify_l2_trajectory", "l2_reduction.l2_reduction_trajectory",
    "sam_mpmath.mp_switch_times", "l2_deep.classify_deep_trajectory", "l2_boundaries.alpha_collapse",
    "l2_boundaries.l2_sam_regime_boundaries", "heatmap.discrete_alpha_collapse",
    "heatmap_discrete.discrete_alpha_collapse", "heatmap_discrete.discrete_heatmap",
    "heatmap_reduction.reduction_heatmap", "heatmap_rk4.rk4_heatmap")) + (
    "biasaudit.validation.sam_multipoint.multipoint_jdagger",)
RETURN_TYPES = ("biasaudit.theory.eos_flow.EosRegimes", "biasaudit.numerics.eos_gd.GdSweep",
                "biasaudit.ledger.Evidence")


def _object(path: str):
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def _is_documented_api(obj) -> bool:
    """A function (cached ones included) or class of biasaudit's own (a module's sympy symbols and undefined
    functions are not)."""
    obj = inspect.unwrap(obj)
    return ((inspect.isfunction(obj) or inspect.isclass(obj))
            and (getattr(obj, "__module__", None) or "").startswith("biasaudit"))


def _public_names() -> list[str]:
    """The names the API reference (docs/api.md) documents: the front door, the types it returns, the
    plumbing layer's public functions (the input checks every command and the API share), and the functions and
    classes of the layers' public modules (:data:`LAYER_MODULES`)."""
    import biasaudit.plumbing as plumbing

    layers = [f"{m}.{n}" for m in LAYER_MODULES for n in importlib.import_module(m).__all__
              if _is_documented_api(_object(f"{m}.{n}"))]
    return ([f"biasaudit.{n}" for n in biasaudit.__all__ if n != "__version__"] + list(RETURN_TYPES)
            + [f"biasaudit.plumbing.{n}" for n in plumbing.__all__] + layers)


def missing_sections(obj, examples: bool = True) -> list[str]:
    """The numpydoc sections ``obj``'s docstring lacks: Parameters for everything that takes any; Returns and
    (where ``examples``) Examples for a function (a cached one read through its wrapper); Returns for each public
    method of a class."""
    obj = inspect.unwrap(obj)
    doc = inspect.getdoc(obj) or ""
    takes = not inspect.isfunction(obj) or bool(inspect.signature(obj).parameters)
    need = (["Parameters"] if takes else []) + ((["Returns"] + (["Examples"] if examples else []))
                                                 if inspect.isfunction(obj) else [])
    missing = [s for s in need if f"{s}\n{'-' * len(s)}" not in doc]
    if inspect.isclass(obj):
        for name, member in vars(obj).items():
            if inspect.isfunction(member) and not name.startswith("_"):
                if "Returns\n-------" not in (inspect.getdoc(member) or ""):
                    missing.append(f"{name}: Returns")
    return missing


@pytest.mark.parametrize("path", _public_names())
def test_every_public_name_has_its_sections(path):
    assert missing_sections(_object(path), examples=path not in WITHOUT_EXAMPLES) == []


def test_every_exemption_names_a_documented_function():
    names = set(_public_names())
    assert [n for n in WITHOUT_EXAMPLES if n not in names] == []
    assert [m for m in WITHOUT_DOCTESTS if m not in LAYER_MODULES] == []


def test_the_section_check_fires_on_a_thin_docstring():
    def thin(x):
        """Do something with x."""

    class Thin:
        """A class.

        Parameters
        ----------
        a : int
        """

        def to_json(self):
            """As a dict."""

    assert missing_sections(thin) == ["Parameters", "Returns", "Examples"]
    assert missing_sections(thin, examples=False) == ["Parameters", "Returns"]
    assert missing_sections(Thin) == ["to_json: Returns"]


@pytest.mark.parametrize("module", DOCTEST_MODULES)
def test_the_examples_run(module):
    result = doctest.testmod(importlib.import_module(module), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_results_are_plain_python_numbers():
    r = biasaudit.sam_regimes(mu=(1, 2, 3), rho=0.5)
    for name in ("rho", "c", "alpha_collapse", "alpha_grow", "alpha_gd_like"):
        assert type(getattr(r, name)) is float, name
    assert type(r.depth) is int
    reg = biasaudit.eos_regimes(x=(1, 2), y=1, w0=(0.1, 0.1))
    assert type(reg.s_gf) is float and type(reg.eta_c) is float
