"""The API reference is usable without the source: every public name of ``biasaudit`` and the types it returns
have numpydoc sections (Parameters, and Returns and Examples for functions), and the examples run."""

import doctest
import importlib
import inspect

import pytest

import biasaudit

# modules whose examples run here (keep them fast: each is a few seconds at most)
DOCTEST_MODULES = ("biasaudit.api", "biasaudit.audit.evidence_view", "biasaudit.audit.prose_math",
                   "biasaudit.plumbing.inputs", "biasaudit.plumbing.atomicio", "biasaudit.plumbing.cachedir",
                   "biasaudit.plumbing.jsonable") + (
    "biasaudit.theory.eos_model", "biasaudit.theory.eos_flow", "biasaudit.theory.eos_risk",
    "biasaudit.theory.eos_minimizers", "biasaudit.theory.eos_central_flow", "biasaudit.theory.formula",
    "biasaudit.theory.sam_gd", "biasaudit.theory.sam_fields", "biasaudit.theory.sam_l2", "biasaudit.theory.sam_linf",
    "biasaudit.numerics.tableau", "biasaudit.numerics.cache_guard",
    "biasaudit.numerics.eos_gd", "biasaudit.validation.decision", "biasaudit.validation.sam_ladder_stats",
    "biasaudit.validation.eos_stats", "biasaudit.numerics.eos_sweep", "biasaudit.numerics.eos_central_flow",
    "biasaudit.numerics.eos_central_flow_ivp", "biasaudit.numerics.eos_flow_ode", "biasaudit.numerics.eos_mpmath",
    "biasaudit.numerics.flows", "biasaudit.numerics.filippov", "biasaudit.numerics.sam_discrete",
    "biasaudit.numerics.l2_reduction", "biasaudit.numerics.sam_mpmath", "biasaudit.numerics.l2_deep")
# the layers' public modules documented so far: every function and class in their ``__all__``
LAYER_MODULES = ("biasaudit.theory.eos_model", "biasaudit.theory.eos_flow", "biasaudit.theory.eos_risk",
                 "biasaudit.theory.eos_minimizers", "biasaudit.theory.eos", "biasaudit.theory.eos_central_flow",
                 "biasaudit.theory.formula", "biasaudit.theory.sam_gd", "biasaudit.theory.sam_fields",
                 "biasaudit.theory.sam_l2", "biasaudit.theory.sam_linf", "biasaudit.numerics.tableau",
                 "biasaudit.numerics.cache_guard", "biasaudit.numerics.eos_gd", "biasaudit.validation.decision",
                 "biasaudit.validation.sam_ladder_stats", "biasaudit.validation.eos_stats",
                 "biasaudit.numerics.eos_sweep", "biasaudit.numerics.eos_central_flow",
                 "biasaudit.numerics.eos_central_flow_ivp", "biasaudit.numerics.eos_flow_ode",
                 "biasaudit.numerics.eos_mpmath", "biasaudit.numerics.flows", "biasaudit.numerics.filippov",
                 "biasaudit.numerics.sam_discrete", "biasaudit.numerics.l2_reduction", "biasaudit.numerics.sam_mpmath",
                 "biasaudit.numerics.l2_deep", "biasaudit.numerics.l2_boundaries")
# functions documented without an example: each compiles a numba kernel on its first call or integrates at high
# precision (seconds); a plain reference beside it carries the example
WITHOUT_EXAMPLES = ("biasaudit.numerics.eos_gd.gd_sweep", "biasaudit.numerics.eos_gd.gd_path") + tuple(
    f"biasaudit.numerics.eos_sweep.{n}" for n in ("sweep_eos", "measured_kink", "kink_estimates", "flow_fixed_point",
                                                 "flow_aligned_deviation", "norm_path")) + (
    "biasaudit.numerics.eos_central_flow.central_flow", "biasaudit.numerics.eos_central_flow.central_flow_curve",
    "biasaudit.numerics.flows.integrate_reduced_flow", "biasaudit.numerics.sam_discrete.run_sam",
    "biasaudit.numerics.l2_reduction.classify_l2_trajectory", "biasaudit.numerics.l2_reduction.l2_reduction_trajectory",
    "biasaudit.numerics.sam_mpmath.mp_switch_times", "biasaudit.numerics.l2_deep.classify_deep_trajectory",
    "biasaudit.numerics.l2_boundaries.alpha_collapse", "biasaudit.numerics.l2_boundaries.l2_sam_regime_boundaries")
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
