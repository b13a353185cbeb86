"""``evidence.jsonl``: one checksummed record per line, rewritten atomically after every finished unit.

Crash safety (a ``kill -9`` at any instant):

* every write builds the whole file in a temporary file in the same directory, ``fsync``s it, and
  ``os.replace``s it over the old one (atomic on POSIX), then ``fsync``s the directory. A reader sees the
  old file or the new one, never a mixture; a killed write leaves only a stray ``.*.tmp`` (removed on the
  next open);
* every line carries ``sha256``, the hash of the record's canonical JSON without that field. A line that
  does not parse, lacks fields, or whose hash does not match (truncated, edited, half-copied) is reported
  as a :class:`BadLine` and never kept: its unit has no evidence and ``--resume`` redoes it;
* records are keyed (claim id / figure id): a key appears once, so nothing is duplicated, and lines are
  written in a fixed order (the audit's order, then any other keys sorted), so the same records give the
  same bytes whatever order the units finished in.

Rewriting the whole file costs O(records) per write; at a few hundred records of a few kB that is well
under a millisecond of work plus one fsync (measured by ``biasaudit bench --cases audit.*``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from biasaudit.plumbing import atomic_write_text

__all__ = ["EvidenceStore", "BadLine", "atomic_write_text", "record_checksum", "canonical_json"]

CHECKSUM_FIELD = "sha256"


def canonical_json(record: dict) -> str:
    """The one JSON spelling of a record: sorted keys, no spaces, UTF-8 kept, NaN refused."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def record_checksum(record: dict) -> str:
    body = {k: v for k, v in record.items() if k != CHECKSUM_FIELD}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class BadLine:
    """A line of the store that is not a complete record (it is dropped, and its unit redone)."""

    lineno: int
    reason: str
    excerpt: str

    def __str__(self) -> str:
        return f"line {self.lineno}: {self.reason} ({self.excerpt!r})"


class EvidenceStore:
    """Records keyed by ``key_field`` in one JSON-lines file; see the module docstring.

    ``required`` fields must be present for a line to count as a complete record.
    """

    def __init__(self, path: Path, key_field: str = "claim_id", required: Sequence[str] = ("verdict",)):
        self.path = Path(path)
        self.key_field = key_field
        self.required = tuple(required)
        self.records: dict[str, dict] = {}
        self.order: list[str] = []

    # -- reading ---------------------------------------------------------------------------------------
    def load(self) -> list[BadLine]:
        """Read the file (if any) into :attr:`records`; return the lines that were not complete records."""
        self.records = {}
        bad: list[BadLine] = []
        if not self.path.exists():
            return bad
        raw = self.path.read_bytes()
        for lineno, line in enumerate(raw.split(b"\n"), 1):
            if not line.strip():
                continue
            record, reason = self._parse(line)
            if record is None:
                bad.append(BadLine(lineno, reason, line[:60].decode("utf-8", "replace")))
                continue
            self.records[record[self.key_field]] = record  # a repeated key: the later line wins, once
        return bad

    def _parse(self, line: bytes) -> tuple[dict | None, str]:
        try:
            record = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None, "not valid JSON (truncated or corrupt)"
        if not isinstance(record, dict):
            return None, "not a JSON object"
        if record.get(CHECKSUM_FIELD) != record_checksum(record):
            return None, "checksum mismatch (partial or edited record)"
        missing = [f for f in (self.key_field, *self.required) if f not in record]
        if missing:
            return None, f"missing fields {missing}"
        if not isinstance(record[self.key_field], str):
            return None, f"{self.key_field} is not a string"
        return record, ""

    # -- writing ---------------------------------------------------------------------------------------
    def set_order(self, keys: Iterable[str]) -> None:
        self.order = list(keys)

    def put(self, record: dict, write: bool = True) -> dict:
        """Stamp the checksum, keep the record (replacing any with the same key) and rewrite the file."""
        from biasaudit.plumbing import jsonable

        record = {k: v for k, v in jsonable(record).items() if k != CHECKSUM_FIELD}
        record[CHECKSUM_FIELD] = record_checksum(record)
        self.records[record[self.key_field]] = record
        if write:
            self.write()
        return record

    def keep_only(self, keys: Iterable[str]) -> None:
        keep = set(keys)
        self.records = {k: v for k, v in self.records.items() if k in keep}

    def ordered(self) -> list[dict]:
        first = [k for k in self.order if k in self.records]
        rest = sorted(set(self.records) - set(first))
        return [self.records[k] for k in first + rest]

    def text(self) -> str:
        return "".join(canonical_json(r) + "\n" for r in self.ordered())

    def write(self) -> None:
        atomic_write_text(self.path, self.text())

    def remove_stale_temporaries(self) -> list[Path]:
        """Delete ``.<name>.<pid>.tmp`` files left by a writer that was killed mid-write."""
        stale = sorted(self.path.parent.glob(f".{self.path.name}.*.tmp"))
        for tmp in stale:
            try:
                tmp.unlink()
            except OSError:
                pass
        return stale
