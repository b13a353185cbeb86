"""The main job, ``biasaudit audit``: run every registered claim, keep the evidence, write the report.

One concept per module:

===================  ===============================================================================
module               what it holds
===================  ===============================================================================
``units``            the unit of work (a claim run or a figure job), picklable, run on any worker
``store``            ``evidence.jsonl``: checksummed records, rewritten atomically after each unit
``executor``         where units run: inline, a local process pool, or an existing Dask cluster
``progress``         a tqdm bar for the run and one per running claim (plain lines when not a TTY)
``provenance``       the git commit and library versions stamped on each record
``runner``           :func:`execute_audit`: validate, resume, submit, store, report
``report_data``      rows of the report: ordering (problems first), math rendering
``evidence_view``    one record as a reader sees it: a sentence, a table of quantities, a table of controls
``prose_math``       powers and indices written in claim prose (``alpha_j^{2-L}``) shown as mathematics
``report_md``        ``report.md``
``report_html``      ``index.html``: static, self-contained (no network, no scripts, local PNGs)
===================  ===============================================================================

The package imports neither numba nor torch at import time; claim modules are imported when the claims
are looked up.
"""

from biasaudit.audit.runner import AuditConfig, AuditResult, execute_audit

__all__ = ["AuditConfig", "AuditResult", "execute_audit"]
