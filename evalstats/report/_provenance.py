"""Provenance: what a reader needs to reproduce a report's numbers (one helper, every kind).

Input digests (sha256 and size of each file, keyed by its path relative to the data directory:
no machine paths in published JSON), package and library versions, and the settings every
published number depends on (seed, resamples, confidence); each report kind adds what
describes its data (rubrics and judges; models and annotators).
"""

from __future__ import annotations

import hashlib
import importlib
import json
import platform
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import DataError

__all__ = ["input_digests", "is_simulated", "provenance", "run_provenance"]


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def input_digests(base: Path, files: Sequence[Path]) -> dict[str, dict[str, Any]]:
    """sha256 and size of each input, keyed by its path relative to ``base``.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()); _ = (d / "a.txt").write_text("x")
    >>> input_digests(d, [d / "a.txt"])["a.txt"]["bytes"]
    1
    """
    return {
        p.relative_to(base).as_posix(): {"sha256": _sha256(p), "bytes": p.stat().st_size}
        for p in files
    }


def run_provenance(*, seed: int | None, n_resamples: int, confidence: float) -> dict[str, Any]:
    """Package and library versions plus the settings every published number depends on.

    >>> run_provenance(seed=0, n_resamples=10, confidence=0.9)["package"]["name"]
    'evalstats'
    """
    import numpy as np
    import pandas as pd

    from .. import __version__

    return {
        "package": {"name": "evalstats", "version": __version__},
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pandas": pd.__version__,
            "scipy": importlib.import_module("scipy").__version__,
        },
        "seed": seed,
        "n_resamples": int(n_resamples),
        "confidence": float(confidence),
    }


def provenance(
    data_dir: Path,
    inputs: Sequence[Path],
    *,
    seed: int | None,
    n_resamples: int,
    confidence: float,
    describe: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The provenance block of ``results.json``.

    ``data_dir`` (its name only), the digests of ``inputs``, then ``describe`` (the report
    kind's own description of its data), then versions and settings.

    >>> import tempfile
    >>> d = Path(tempfile.mkdtemp()) / "mydata"; d.mkdir(); _ = (d / "x.json").write_text("{}")
    >>> p = provenance(d, [d / "x.json"], seed=1, n_resamples=5, confidence=0.95)
    >>> p["data_dir"], list(p["inputs"]), p["seed"]
    ('mydata', ['x.json'], 1)
    """
    return {
        "data_dir": data_dir.name,
        "inputs": input_digests(data_dir, inputs),
        **dict(describe or {}),
        **run_provenance(seed=seed, n_resamples=n_resamples, confidence=confidence),
    }


def is_simulated(data_dir: Path) -> bool:
    """True when ``data_dir/truth.json`` says ``"simulated": true``."""
    truth = data_dir / "truth.json"
    if not truth.exists():
        return False
    try:
        return json.loads(truth.read_text(encoding="utf-8")).get("simulated") is True
    except (json.JSONDecodeError, AttributeError) as exc:
        raise DataError(f"unreadable truth.json: {exc}", path=truth) from None
