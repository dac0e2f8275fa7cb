"""Other harnesses' run logs -> ``tasks`` and ``runs`` of the data contract.

Three importers, each returning an :class:`Imported` (``tasks, runs = from_...(...)``) and
validated with the usual loaders, so their errors name the source file and record:

- :func:`from_inspect` — inspect_ai ``.eval`` / ``.json`` logs (needs ``evalstats[inspect]``);
- :func:`from_claude_code` — ``claude -p`` output files, json or stream-json;
- :func:`from_table` — any JSONL / CSV / Parquet table through a column mapping.

:func:`write_data_dir` writes the result into a data directory atomically. What could not be
mapped is in ``Imported.problems``; :func:`format_problems` turns them into one line each.
On the command line: ``evalstats import inspect|claude-code|table SRC... -o DATA_DIR``.
"""

from __future__ import annotations

from ._claude_code import DEFAULT_CLAUDE_FILE_TOOLS, from_claude_code, parse_output
from ._common import Imported, Problem, Source, format_problems, write_data_dir
from ._inspect import DEFAULT_INSPECT_FILE_TOOLS, from_inspect
from ._table import from_table

__all__ = [
    "DEFAULT_CLAUDE_FILE_TOOLS",
    "DEFAULT_INSPECT_FILE_TOOLS",
    "Imported",
    "Problem",
    "Source",
    "format_problems",
    "from_claude_code",
    "from_inspect",
    "from_table",
    "parse_output",
    "write_data_dir",
]
