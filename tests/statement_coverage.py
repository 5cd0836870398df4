"""Statement coverage of a test run on Neo4j: ``python tests/statement_coverage.py DIR``.

``DIR`` is the run's ``GRAPHMEM_STATEMENT_LOG``: every test process and every server they started wrote a file
there (``graphmem/store/statement_log.py``). Their union is what graphmem's own code ran on the server. Prints
each file's count, each statement that never ran, and each the server refused; exits 1 when a statement never
ran without a reason in ``NOT_RUN``, or when the server refused one for a reason other than the contention
graphmem retries.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from graphmem.service.guide import GUIDE_STATEMENTS
from graphmem.store.queries import statements
from graphmem.store.schema import RACED_DDL_CODES

# Statements graphmem's code never runs on Neo4j, each with the reason.
_BROWSER = ("Neo4j Browser runs it from graphmem's guide (graphmem serves its text and runs it never); "
            "tests/test_browser_pages.py runs it on the server")
NOT_RUN: dict[str, str] = {name: _BROWSER for name in GUIDE_STATEMENTS}
# Codes of refusals that are a part of normal work, and retried: a write that meets another (the store's loop),
# and schema DDL that lost a race to another process starting on the same database (the bootstrap's).
RETRIED = ("Neo.TransientError.", "Neo.ClientError.Schema.ConstraintValidationFailed", *sorted(RACED_DDL_CODES))


def read(directory: Path) -> tuple[set[str], Counter[tuple[str, str]], int]:
    ran: set[str] = set()
    refused: Counter[tuple[str, str]] = Counter()
    files = sorted(directory.glob("*.statements"))
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            kind, name, *code = line.split(" ")
            if kind == "ok":
                ran.add(name)
            else:
                refused[(name, code[0] if code else "none")] += 1
    return ran, refused, len(files)


def main(directory: Path) -> int:
    named = set(statements())
    ran, refused, files = read(directory)
    missing = sorted(named - ran - set(NOT_RUN))
    unknown = sorted((ran | {name for name, _ in refused}) - named)
    failures = {key: count for key, count in refused.items() if not key[1].startswith(RETRIED)}
    print(f"statement coverage on Neo4j: {len(named & ran)} of {len(named)} named statements ran "
          f"({len(NOT_RUN)} listed as not run), from {files} processes")
    for name in missing:
        print(f"  never ran: {name}")
    for name, reason in sorted(NOT_RUN.items()):
        print(f"  not run by design: {name}: {reason}")
    for (name, code), count in sorted(refused.items()):
        kind = "refused" if (name, code) in failures else "retried"
        print(f"  {kind}: {name} {code} x{count}")
    for name in unknown:
        print(f"  not a named statement: {name}")
    return 1 if missing or failures or unknown or files == 0 else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
