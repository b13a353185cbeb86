"""Property-based fuzzing of the CLI: for argument vectors drawn over the whole float range,
empty and malformed lists and odd paths, every subcommand either exits 0 with finite JSON or exits 2 with
one line that names a parameter, never a traceback, a warning or a hang (a per-case time limit).

The cheap subcommands (``regimes sam``, ``regimes eos``, ``sweep eos``) run to the end; the expensive ones
(``audit``, ``validate``, ``bench``, ``check``) are fuzzed on the options they check before any work.
"""

import contextlib
import faulthandler
import json
import math
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biasaudit.cli import main

CASE_LIMIT_S = 30  # one example; the slowest valid regimes/sweep calls measured take ~4 s
BACKSTOP_GRACE_S = 30  # after the limit, the watchdog waits this long for SIGALRM before it ends the process

FLOATS = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1e-320, 1e-300, 1e-30, 1e30, 1e300, 1e308, -1.0, 0.5, 1.0, 2.0, 3.0]),
)


def _number_text(x):
    return repr(float(x))


NUMBER = st.one_of(FLOATS.map(_number_text), st.floats(1e-3, 1e3).map(_number_text),
                   st.sampled_from(["", " ", "abc", "1,2", "1e", "--1", "0x10"]))
LIST = st.one_of(
    st.lists(FLOATS, min_size=0, max_size=5).map(lambda xs: ",".join(_number_text(x) for x in xs)),
    # plausible data: sorted, positive, moderate (reaches the numerics instead of the input checks)
    st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=4, unique=True).map(
        lambda xs: ",".join(_number_text(x) for x in sorted(xs))),
    st.sampled_from(["", ",", "1,,2", "1;2", "a,b", " 1 , 2 ", "1,2,"]),
)
SMALL_INT = st.one_of(st.integers(-3, 40), st.sampled_from([0, 10**9, -(10**9)]))


class _Timeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds, grace=BACKSTOP_GRACE_S):
    """SIGALRM fails a case that hangs in Python code. A numba loop holds the GIL and never lets the signal
    handler run, so a C-level watchdog (faulthandler) ends the whole process ``grace`` seconds later with
    every thread's stack on stderr: a hang is a loud failure that names where it hung, never a stuck CI."""
    def boom(signum, frame):
        raise _Timeout(f"no answer within {seconds} s")

    previous = signal.signal(signal.SIGALRM, boom)
    signal.alarm(seconds)
    faulthandler.dump_traceback_later(seconds + grace, exit=True, file=sys.__stderr__)  # capsys swaps sys.stderr
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _non_finite(value):
    if isinstance(value, dict):
        return any(_non_finite(v) for v in value.values())
    if isinstance(value, list):
        return any(_non_finite(v) for v in value)
    if isinstance(value, float):
        return not math.isfinite(value)
    return isinstance(value, str) and value.lower() in ("nan", "inf", "-inf", "infinity", "-infinity")


def _main(argv):
    """``main`` in-process, with argparse's SystemExit(2) turned into its code, under the time limit."""
    with _time_limit(CASE_LIMIT_S):
        try:
            return main([str(a) for a in argv])
        except SystemExit as exc:
            return exc.code


def _check(argv, capsys, json_expected):
    capsys.readouterr()  # nothing left over from an earlier example
    code = _main(argv)
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Warning" not in err, (argv, err[-2000:])
    if code == 2:
        assert err.startswith("biasaudit: error: ") and err.count("\n") == 1, (argv, err)
        return
    assert code == 0, (argv, code, err[-2000:])
    if json_expected:
        assert not _non_finite(json.loads(out)), (argv, out[:2000])


FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@FUZZ
@given(mu=LIST, rho=NUMBER, depth=SMALL_INT, norm=st.sampled_from(["l2", "linf", "l1", ""]),
       alpha=st.one_of(st.none(), LIST), normalization=st.sampled_from(["joint", "layer", "x"]))
def test_fuzz_regimes_sam(capsys, mu, rho, depth, norm, alpha, normalization):
    argv = ["regimes", "sam", "--mu", mu, "--rho", rho, "--depth", depth, "--norm", norm,
            "--normalization", normalization, "--json"]
    if alpha is not None:
        argv += ["--alpha", alpha]
    _check(argv, capsys, json_expected=True)


@FUZZ
@given(x=LIST, y=NUMBER, w0=LIST, c=NUMBER)
def test_fuzz_regimes_eos(capsys, x, y, w0, c):
    _check(["regimes", "eos", "--x", x, "--y", y, "--w0", w0, "--loss-factor", c, "--json"], capsys,
           json_expected=True)


@FUZZ
@given(x=LIST, y=NUMBER, w0=LIST, eta_min=NUMBER, eta_max=NUMBER, n=st.integers(-2, 40),
       steps=st.integers(-2, 3000))
def test_fuzz_sweep_eos(capsys, x, y, w0, eta_min, eta_max, n, steps):
    _check(["sweep", "eos", "--x", x, "--y", y, "--w0", w0, "--eta-min", eta_min, "--eta-max", eta_max,
            "--n", n, "--steps", steps, "--json"], capsys, json_expected=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(claims=st.sampled_from(["", ",", "no.such.*", " , "]), seed=st.integers(-5, -1),
       workers=st.integers(-3, 0), tier=st.sampled_from(["quick", "huge"]),
       resources=st.sampled_from(["GPU", "GPU=0", "=1", "GPU=x"]))
def test_fuzz_audit_options_fail_before_any_work(capsys, tmp_path_factory, claims, seed, workers, tier,
                                                 resources):
    """Each drawn vector has at least one bad option: exit 2, one line, nothing written."""
    out = tmp_path_factory.mktemp("fuzz-audit")
    argv = ["audit", "--out", out / "r", "--claims", claims, "--seed", seed, "--workers", workers, "--tier", tier,
            "--run-resources", resources]
    capsys.readouterr()
    code = _main(argv)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err[-2000:]
    assert not (out / "r" / "evidence.jsonl").exists()


@pytest.mark.parametrize("argv", [
    ["check", "--seed", "-1"], ["check", "--profile", "fast"], ["check", "--seeds", "a,b", "--stability"],
    ["validate", "eos", "--eta-grid", "1e308", "--absolute", "--max-steps", "1"],
    ["validate", "eos", "--eps", "nan"], ["validate", "eos", "--eps", "1e-320"], ["validate", "sam", "--steps", "0"],
    ["validate", "sam", "--rho", "-1"], ["validate", "sam", "--rho", "1e308"], ["validate", "sam", "--lr", "0"],
    ["validate", "sam", "--lr", "nan"], ["validate", "sam", "--lr", "1e40"], ["validate", "sam", "--init-scales", "1e-99"],
    ["validate", "sam", "--steps", "100000000"], ["validate", "sam", "--seeds", "5000"],
    ["validate", "eos", "--max-steps", "999999999"], ["validate", "eos", "--n-train", "10000000"],
    ["validate", "eos", "--n-test", "0"],
    ["bench", "--cases", "no.such.case"],
])
def test_fuzz_expensive_commands_reject_bad_options_up_front(capsys, argv):
    code = _main(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("biasaudit: error: ") and "Traceback" not in err, (argv, err[-2000:])


# ------------------------------------------------------------------ inside the documented ranges: answers
LOG_MAGNITUDE = st.floats(-30, 30).map(lambda e: 10.0**e)


def _increasing(values):
    out = sorted(set(values))
    return ",".join(repr(v) for v in out)


IN_RANGE = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@IN_RANGE
@given(mu=st.tuples(st.floats(-30, 26).map(lambda e: 10.0**e),
                    st.lists(st.floats(0, 4).map(lambda e: 10.0**e), min_size=2, max_size=4, unique=True)).map(
           lambda base_spread: [base_spread[0] * f for f in base_spread[1]]), rho=LOG_MAGNITUDE,
       depth=st.integers(1, 4), norm=st.sampled_from(["l2", "linf"]),
       alpha=st.one_of(st.none(), LOG_MAGNITUDE))
def test_inside_the_ranges_regimes_sam_answers_finitely(capsys, mu, rho, depth, norm, alpha):
    argv = ["regimes", "sam", "--mu", _increasing(mu), "--rho", repr(rho), "--depth", depth, "--norm", norm, "--json"]
    if alpha is not None or norm == "linf":
        argv += ["--alpha", repr(alpha if alpha is not None else rho / 2)]
    _check(argv, capsys, json_expected=True)


@IN_RANGE
@given(x=st.lists(st.floats(-6, 6).map(lambda e: 10.0**e), min_size=2, max_size=3, unique=True),
       scale=st.floats(-12, 12).map(lambda e: 10.0**e), y=st.floats(-3, 3).map(lambda e: 10.0**e),
       w0=st.floats(-3, 1).map(lambda e: 10.0**e))
def test_inside_the_ranges_regimes_eos_answers_finitely(capsys, x, scale, y, w0):
    xs = [v * scale for v in x]
    _check(["regimes", "eos", "--x", _increasing(xs), "--y", repr(y * scale), "--w0",
            ",".join([repr(w0)] * len(xs)), "--json"], capsys, json_expected=True)


def test_a_hang_inside_a_numba_loop_ends_the_process(tmp_path):
    """The time limit itself has power: a nopython loop that holds the GIL for minutes is ended by the
    watchdog within the limit plus the grace, with the stack of the hanging thread on stderr."""
    script = tmp_path / "hang.py"
    script.write_text(textwrap.dedent(f"""
        import importlib.util, sys
        spec = importlib.util.spec_from_file_location("fuzz", {str(Path(__file__))!r})
        fuzz = importlib.util.module_from_spec(spec); spec.loader.exec_module(fuzz)
        import numba

        @numba.njit
        def spin(n):
            acc = 0.0
            for i in range(n):
                acc += (i % 7) * 1e-9
            return acc

        spin(10)  # compiled outside the limit
        with fuzz._time_limit(1, grace=1):
            spin(10**12)  # minutes, with the GIL held
        print("not reached")
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "not reached" not in done.stdout
    assert "Timeout" in done.stderr and "hang.py" in done.stderr, done.stderr[-2000:]
