"""Where the units of an audit run: inline, a local process pool, or an existing Dask cluster.

Every executor has the same shape: ``run(units)`` yields ``(unit, record)`` as units finish (in any
order), and the records do not depend on the executor (the runner writes them in a fixed order).

``local`` with one worker runs inline in this process: no pickling, no start-up, and the per-case
progress bars. With more workers it is a ``concurrent.futures.ProcessPoolExecutor`` with the ``spawn``
start method. Why a process pool and not a Dask ``LocalCluster`` here: on one machine it needs no
scheduler, no ports and no heartbeat threads, starts in the time of one interpreter, and a worker crash
surfaces as an exception on the futures; ``spawn`` (not ``fork``) because the parent may hold torch/OpenMP
and tqdm threads, which ``fork`` would copy in a locked state. Each worker is limited to
``cpus // workers`` BLAS/OpenMP/numba threads so workers do not oversubscribe the cores.

``dask`` submits the same units to an existing cluster through ``distributed.Client`` (we do not
schedule anything ourselves). The connection has a timeout, so an unreachable scheduler is a clear error
within seconds. The workers must have the same code installed (the unit names a claim id, and the worker
looks it up in its own registry; a worker that lacks it returns an ``error`` record saying so).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Callable, Iterator, Sequence

from biasaudit.audit.units import execute, set_reporter
from biasaudit.plumbing import InputError

__all__ = ["InlineExecutor", "ProcessExecutor", "DaskExecutor", "make_executor", "EXECUTORS", "CONNECT_TIMEOUT_S"]

EXECUTORS = ("local", "dask")
CONNECT_TIMEOUT_S = 3.0  # the Dask scheduler must answer within this (a clear error otherwise)
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
_ADDRESS = re.compile(r"^[a-z][a-z0-9+]*://\S+$")

Reporter = Callable[[tuple], None]


def _usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask on Linux, else ``os.cpu_count()``), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _failure(unit, exc: BaseException) -> dict:
    """The record of a unit whose worker failed outside the check (crash, pickling, lost worker)."""
    from biasaudit.audit.units import ClaimUnit, RunUnit, error_record

    if isinstance(unit, ClaimUnit):
        return error_record(unit, None, exc, 0.0)
    if isinstance(unit, RunUnit):
        return {"record": "run", "run_id": unit.run_id, "label": unit.label, "runner": unit.runner,
                "status": "error", "detail": f"{type(exc).__name__}: {exc}", "elapsed_s": 0.0}
    return {"record": "figure", "figure_id": unit.figure_id, "tier": unit.tier, "status": "error",
            "files": [], "detail": f"{type(exc).__name__}: {exc}", "elapsed_s": 0.0}


class InlineExecutor:
    """Run the units one after the other in this process."""

    name = "local"
    workers = 1

    def __init__(self, reporter: Reporter | None = None):
        self.reporter = reporter

    def run(self, units: Sequence) -> Iterator[tuple[object, dict]]:
        """Execute the units here, one after the other, yielding ``(unit, record)``; progress events go to the
        reporter."""
        set_reporter(self.reporter)
        try:
            for unit in units:
                yield unit, execute(unit)
        finally:
            set_reporter(None)

    def close(self, abort: bool = False) -> None:
        """Nothing to release: the units ran in this process."""
        pass


def _exit_with_parent(parent: int, period_s: float = 1.0) -> None:
    """Daemon thread of a worker: exit as soon as the audit process is gone (even after a kill -9)."""
    import threading
    import time

    def watch():
        while os.getppid() == parent:
            time.sleep(period_s)
        os._exit(3)

    threading.Thread(target=watch, name="biasaudit-parent-watch", daemon=True).start()


def _init_worker(queue, threads: int, parent: int) -> None:
    """Runs first in each spawned worker: thread limits, the progress queue, the parent watch."""
    for var in _THREAD_VARIABLES:
        os.environ[var] = str(threads)
    if queue is not None:
        set_reporter(queue.put)
    _exit_with_parent(parent)


class ProcessExecutor:
    """A ``ProcessPoolExecutor`` (spawn) of ``workers`` processes; progress events come back on a queue.

    A worker that dies (segfault, out-of-memory kill) breaks the whole pool. The unit it was running
    (known from the synchronous progress events; see :meth:`run`) gets an ``error`` record saying so, and
    a new pool runs the rest, so one crashing check does not take the others with it.
    """

    name = "local"

    def __init__(self, workers: int, reporter: Reporter | None = None):
        import multiprocessing

        self.workers = workers
        self.reporter = reporter
        self._ctx = multiprocessing.get_context("spawn")
        # SimpleQueue: put() writes to the pipe synchronously (no feeder thread), so a "start" event is
        # delivered even when its worker is killed right after; that is how a crashed unit is identified.
        self._queue = self._ctx.SimpleQueue()
        self._pool = None
        self._pool_workers = 0
        self._running: set[str] = set()

    def _drain(self) -> None:
        while True:
            try:
                if self._queue is None or self._queue.empty():
                    return
                event = self._queue.get()
            except (EOFError, OSError):
                return
            if event[0] == "start":
                self._running.add(event[1])
            elif event[0] == "end":
                self._running.discard(event[1])
            if self.reporter is not None:
                self.reporter(event)

    def _start_pool(self, workers: int):
        """Reuse the pool across :meth:`run` calls (the audit's phases); a new one after a break."""
        from concurrent.futures import ProcessPoolExecutor

        if self._pool is not None and self._pool_workers == workers:
            return
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        threads = max(1, _usable_cpus() // workers)
        self._pool = ProcessPoolExecutor(workers, mp_context=self._ctx, initializer=_init_worker,
                                         initargs=(self._queue, threads, os.getpid()))
        self._pool_workers = workers
        self._running = set()

    def run(self, units: Sequence) -> Iterator[tuple[object, dict]]:
        """Yield ``(unit, record)`` as units finish; survive worker deaths (see the class docstring).

        After a pool breaks, the units that were in flight are *suspects* (when several ran at once only
        one of them killed the pool: the pool then terminates the others). Suspects are rerun one at a
        time in a 1-process pool, where a break names its unit exactly; that unit gets an ``error``
        record, the others run normally.
        """
        import time
        from concurrent.futures import FIRST_COMPLETED, wait
        from concurrent.futures.process import BrokenProcessPool

        todo, suspects = list(units), []
        blind_retries = 1  # pool breaks with no in-flight unit identified, retried before giving up
        while todo or suspects:
            isolated = bool(suspects)
            batch, workers = (suspects, 1) if isolated else (todo, self.workers)
            if isolated:
                suspects = []
            else:
                todo = []
            self._start_pool(workers)
            pending = {self._pool.submit(execute, unit): unit for unit in batch}
            unfinished = []
            while pending:
                done, _ = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                self._drain()
                if self.reporter is not None:
                    self.reporter(("tick", ""))
                for future in done:
                    unit = pending.pop(future)
                    try:
                        record = future.result()
                    except BrokenProcessPool:
                        unfinished.append(unit)
                        continue
                    except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable result
                        record = _failure(unit, exc)
                    yield unit, record
            if not unfinished:
                continue
            self._pool.shutdown(wait=True, cancel_futures=True)  # broken: the next batch gets a new pool
            self._pool = None
            time.sleep(0.1)
            self._drain()  # the last events of the dead workers
            in_flight = [u for u in unfinished if u.key in self._running]
            waiting = [u for u in unfinished if u.key not in self._running]
            if isolated or len(in_flight) == 1:
                for unit in in_flight:
                    yield unit, _failure(unit, RuntimeError(
                        "the worker process died while running this unit (a crash in native code, or "
                        "killed, e.g. out of memory)"))
                (suspects if isolated else todo).extend(waiting)
            elif in_flight:
                suspects.extend(in_flight)
                todo.extend(waiting)
            elif blind_retries > 0:
                blind_retries -= 1
                todo.extend(waiting)
            else:
                for unit in waiting:
                    yield unit, _failure(unit, RuntimeError("the worker pool broke twice; unit not run"))
        self._drain()

    def close(self, abort: bool = False) -> None:
        """Shut the pool down and close the progress queue; with ``abort`` (Ctrl-C) cancel the waiting units and
        terminate the running workers instead of waiting for them."""
        if self._pool is not None:
            if abort:  # Ctrl-C: do not wait for running checks; stop the worker processes
                processes = list(getattr(self._pool, "_processes", {}).values())  # no public handle
                self._pool.shutdown(wait=False, cancel_futures=True)
                for process in processes:
                    process.terminate()
            else:
                self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        if self._queue is not None:
            self._queue.close()
            self._queue = None


class DaskExecutor:
    """Submit units to an existing Dask cluster at ``scheduler`` (``tcp://host:port``)."""

    name = "dask"

    def __init__(self, scheduler: str, timeout_s: float = CONNECT_TIMEOUT_S):
        from distributed import Client

        self.scheduler = scheduler
        try:
            self.client = Client(scheduler, timeout=f"{timeout_s}s", set_as_default=False)
        except (OSError, TimeoutError) as exc:
            raise InputError("scheduler", f"no Dask scheduler answered within {timeout_s:g} s "
                             f"({type(exc).__name__}); start one with `dask scheduler` or check the address",
                             scheduler) from None
        try:
            self.workers = max(1, len(self.client.scheduler_info().get("workers", {})))
        except Exception:  # noqa: BLE001 - only used for display
            self.workers = 1

    def run(self, units: Sequence) -> Iterator[tuple[object, dict]]:
        """Submit every unit to the cluster (with its Dask ``resources``) and yield ``(unit, record)`` as they complete;
        a lost worker or an unpicklable result becomes an ``error`` record."""
        from distributed import as_completed

        token = uuid.uuid4().hex[:8]
        futures = {}
        for unit in units:
            resources = dict(getattr(unit, "resources", ()) or ()) or None  # e.g. {"GPU": 1} for a run
            future = self.client.submit(execute, unit, key=f"biasaudit-{unit.key}-{token}", pure=False,
                                        retries=0, resources=resources)
            futures[future] = unit
        for future in as_completed(list(futures), loop=self.client.loop):
            unit = futures[future]
            try:
                record = future.result()
            except Exception as exc:  # noqa: BLE001 - a lost worker or unpicklable result
                record = _failure(unit, exc)
            future.release()
            yield unit, record

    def close(self, abort: bool = False) -> None:
        """Close the connection to the scheduler (the cluster keeps running)."""
        self.client.close()


MAX_LOCAL_WORKERS = 1024  # processes of one machine's pool; beyond it the OS (semaphores, fork) fails first


def validate_executor(executor: str, scheduler: str | None, workers: int | None) -> None:
    """Check the executor options before any work (InputError naming the option)."""
    if executor not in EXECUTORS:
        raise InputError("executor", f"must be one of {', '.join(EXECUTORS)}", executor)
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                or not 1 <= workers <= MAX_LOCAL_WORKERS):
        raise InputError("workers", f"must be an integer in [1, {MAX_LOCAL_WORKERS}]", workers)
    if executor == "dask":
        if not scheduler:
            raise InputError("scheduler", "is required with --executor dask (e.g. tcp://127.0.0.1:8786)")
        if not _ADDRESS.match(scheduler):
            raise InputError("scheduler", "must be an address like tcp://host:port", scheduler)
        if workers is not None:
            raise InputError("workers", "applies to --executor local only (the Dask cluster has its own)",
                             workers)
    elif scheduler:
        raise InputError("scheduler", "applies to --executor dask only", scheduler)


def make_executor(executor: str = "local", workers: int | None = None, scheduler: str | None = None,
                  reporter: Reporter | None = None, timeout_s: float = CONNECT_TIMEOUT_S):
    """The executor for the CLI options; connects to Dask here (so a bad address fails before any work)."""
    validate_executor(executor, scheduler, workers)
    if executor == "dask":
        return DaskExecutor(scheduler, timeout_s=timeout_s)
    n = _usable_cpus() if workers is None else workers
    return InlineExecutor(reporter) if n == 1 else ProcessExecutor(n, reporter)
