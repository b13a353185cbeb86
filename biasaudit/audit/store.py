"""``evidence.jsonl``: one checksummed record per line, rewritten atomically after every finished unit.

Crash safety (a ``kill -9`` at any instant):

* every write builds the whole file in a temporary file in the same directory, ``fsync``s it, and
  ``os.replace``s it over the old one (atomic on POSIX), then ``fsync``s the directory. A reader sees the
  old file or the new one, never a mixture; a killed write leaves only a stray ``.*.tmp`` (removed on the
  next open);
* every line carries ``hmac_sha256``, an HMAC-SHA256 of the record's canonical JSON without that field,
  keyed by a random per-output-folder key kept beside the evidence (``.evidence-key``, mode 0600; see
  :func:`folder_key`). A line that does not parse, lacks fields, or whose HMAC does not match (truncated,
  edited, half-copied, or a verdict flipped and a plain hash recomputed) is reported as a :class:`BadLine`
  and never kept: its unit has no evidence and ``--resume`` redoes it. A store may also ``check`` each
  record (the audit re-derives every claim's verdict from its error, tolerance and controls:
  :func:`biasaudit.ledger.verdict_inconsistency`) and drops the records that fail;
* records are keyed (claim id / figure id): a key appears once, so nothing is duplicated, and lines are
  written in a fixed order (the audit's order, then any other keys sorted), so the same records give the
  same bytes whatever order the units finished in.

Rewriting the whole file costs O(records) per write; at a few hundred records of a few kB that is well
under a millisecond of work plus one fsync (measured by ``biasaudit bench --cases audit.*``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from biasaudit.plumbing import atomic_write_text

__all__ = ["EvidenceStore", "BadLine", "atomic_write_text", "record_checksum", "canonical_json", "folder_key",
           "CHECKSUM_FIELD", "KEY_FILE"]

CHECKSUM_FIELD = "hmac_sha256"
KEY_FILE = ".evidence-key"


def canonical_json(record: dict) -> str:
    """The one JSON spelling of a record: sorted keys, no spaces, UTF-8 kept, NaN refused."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def record_checksum(record: dict, key: bytes = b"") -> str:
    """HMAC-SHA256 (``key``; an empty key still gives a well-defined digest) of the record without its
    checksum field."""
    body = {k: v for k, v in record.items() if k != CHECKSUM_FIELD}
    return hmac.new(key, canonical_json(body).encode("utf-8"), hashlib.sha256).hexdigest()


def folder_key(folder: Path) -> bytes:
    """The output folder's evidence key: read ``folder/.evidence-key``, or create it (32 random bytes, hex,
    mode 0600, created exclusively so two writers cannot make two keys)."""
    path = Path(folder) / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        text = path.read_text().strip()
        try:
            key = bytes.fromhex(text)
        except ValueError:
            key = b""
        if len(key) < 16:
            raise ValueError(f"{path}: not an evidence key (delete it to start a new one; the evidence "
                             "then counts as unverified and is redone on --resume)") from None
        return key
    key = secrets.token_bytes(32)
    with os.fdopen(fd, "w") as fh:
        fh.write(key.hex() + "\n")
    return key


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

    def __init__(self, path: Path, key_field: str = "claim_id", required: Sequence[str] = ("verdict",),
                 secret: bytes = b"", check: Callable[[dict], str] | None = None):
        self.path = Path(path)
        self.key_field = key_field
        self.required = tuple(required)
        self.secret = secret
        self.check = check  # record -> "" if sound, else why it is not kept
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
        if not hmac.compare_digest(str(record.get(CHECKSUM_FIELD, "")), record_checksum(record, self.secret)):
            return None, "checksum mismatch (partial or edited record)"
        missing = [f for f in (self.key_field, *self.required) if f not in record]
        if missing:
            return None, f"missing fields {missing}"
        if not isinstance(record[self.key_field], str):
            return None, f"{self.key_field} is not a string"
        why = self.check(record) if self.check is not None else ""
        if why:
            return None, f"verdict does not follow from the record ({why})"
        return record, ""

    # -- writing ---------------------------------------------------------------------------------------
    def set_order(self, keys: Iterable[str]) -> None:
        """Fix the order of the records in the file: these keys first, the others after them, sorted."""
        self.order = list(keys)

    def put(self, record: dict, write: bool = True) -> dict:
        """Stamp the checksum, keep the record (replacing any with the same key) and rewrite the file."""
        from biasaudit.plumbing import jsonable

        record = {k: v for k, v in jsonable(record).items() if k != CHECKSUM_FIELD}
        record[CHECKSUM_FIELD] = record_checksum(record, self.secret)
        self.records[record[self.key_field]] = record
        if write:
            self.write()
        return record

    def keep_only(self, keys: Iterable[str]) -> None:
        """Drop every record whose key is not in ``keys`` (in memory; :meth:`write` saves)."""
        keep = set(keys)
        self.records = {k: v for k, v in self.records.items() if k in keep}

    def ordered(self) -> list[dict]:
        """The records in file order (see :meth:`set_order`)."""
        first = [k for k in self.order if k in self.records]
        rest = sorted(set(self.records) - set(first))
        return [self.records[k] for k in first + rest]

    def text(self) -> str:
        """The file's content: one canonical JSON line per record, in file order."""
        return "".join(canonical_json(r) + "\n" for r in self.ordered())

    def write(self) -> None:
        """Rewrite the file atomically."""
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
