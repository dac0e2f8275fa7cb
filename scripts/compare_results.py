#!/usr/bin/env python3
"""Compare two results.json files number by number: ``compare_results.py OLD NEW``.

Prints every difference (path, old, new) in the tables, parameters, unavailable sections and
provenance (library versions excepted), and exits 1 when any published number differs.
Used to check that a change of the report code leaves the sample report's numbers as they
were (same seed): render with the old code, render with the new, compare.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

IGNORED = ("provenance.versions", "provenance.package")


def differences(a, b, path=""):
    if path.lstrip(".") in IGNORED:
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            sub = f"{path}.{k}"
            if k not in a or k not in b:
                if sub.lstrip(".") not in IGNORED:
                    yield sub, a.get(k, "<absent>"), b.get(k, "<absent>")
                continue
            yield from differences(a[k], b[k], sub)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path} (length)", len(a), len(b)
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from differences(x, y, f"{path}[{i}]")
    elif type(a) is not type(b) or a != b:
        yield path, a, b


def count_numbers(doc) -> int:
    if isinstance(doc, dict):
        return sum(count_numbers(v) for v in doc.values())
    if isinstance(doc, list):
        return sum(count_numbers(v) for v in doc)
    return int(isinstance(doc, int | float) and not isinstance(doc, bool))


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    old, new = (json.loads(Path(p).read_text(encoding="utf-8")) for p in argv)
    diffs = list(differences(old, new))
    for where, a, b in diffs[:50]:
        print(f"{where}: {a!r} -> {b!r}")
    n = count_numbers(old.get("tables", {}))
    print(f"{len(diffs)} difference(s); {n} numbers in the old tables")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
