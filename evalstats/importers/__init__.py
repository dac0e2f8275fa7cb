"""Other harnesses' run logs -> ``tasks`` and ``runs`` of the data contract (docs/data.md).

Each ``from_*`` returns an :class:`Imported`; :func:`write_data_dir` writes it atomically.
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
