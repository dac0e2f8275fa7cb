"""How results show themselves: a short text block and a compact, escaped HTML table."""

from __future__ import annotations

import dataclasses
import html
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "MAX_COLUMNS", "MAX_ITEMS", "MAX_ROWS", "ResultDisplay", "count_text", "judge_label",
    "judge_model", "format_scalar", "html_table", "summarize_value", "text_table",
]  # fmt: skip

#: Arrays listed in full, frames shown as a nested table (rows, columns), text cut.
MAX_ITEMS, MAX_ROWS, MAX_COLUMNS, _MAX_TEXT = 8, 12, 8, 200
# Inline: no stylesheet can be assumed in a notebook's output.
_TABLE_STYLE = "border-collapse:collapse;font-size:0.9em"
_CELL_STYLE = "padding:1px 8px;text-align:left;vertical-align:top"


def format_scalar(value: Any) -> str:
    """One number or label as short text: four significant digits for floats.

    >>> format_scalar(0.523312), format_scalar(3.2e-07), format_scalar(12), format_scalar(None)
    ('0.5233', '3.2e-07', '12', 'None')
    """
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return f"{float(value):.4g}"
    if value is None or value is pd.NA:
        return str(value)
    text = str(value)
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _interval(est: Any, lo: Any, hi: Any) -> str:
    return f"{format_scalar(est)} [{format_scalar(lo)}, {format_scalar(hi)}]"


def summarize_value(value: Any) -> str:
    """A field's value as one line of text: arrays and frames summarised, never dumped.

    >>> import numpy as np
    >>> summarize_value(np.arange(100.0))
    'array of 100 values, from 0 to 99'
    """
    if isinstance(value, pd.DataFrame):
        rows, cols = value.shape
        names = [str(c) for c in value.columns]
        shown = ", ".join(names[:MAX_COLUMNS]) + (
            f" and {len(names) - MAX_COLUMNS} more" if len(names) > MAX_COLUMNS else ""
        )
        size = f"{rows} row{'s' * (rows != 1)} × {cols} column{'s' * (cols != 1)}"
        return f"DataFrame, {size}: {shown}" if names else f"DataFrame, {size}"
    if isinstance(value, pd.Series):
        value = value.to_numpy()
    if isinstance(value, np.ndarray):
        flat = value.ravel()
        if flat.size <= MAX_ITEMS:
            return "[" + ", ".join(format_scalar(v) for v in flat.tolist()) + "]"
        text = f"array of {'×'.join(map(str, value.shape))} values"
        if np.issubdtype(value.dtype, np.number):
            finite = flat[np.isfinite(flat)] if np.issubdtype(flat.dtype, np.floating) else flat
            if finite.size:
                return (
                    f"{text}, from {format_scalar(finite.min())} to {format_scalar(finite.max())}"
                )
        return text
    if isinstance(value, tuple | list):
        more = f" and {len(value) - MAX_ITEMS} more" if len(value) > MAX_ITEMS else ""
        return ", ".join(format_scalar(v) for v in value[:MAX_ITEMS]) + more
    if isinstance(value, dict):
        return ", ".join(f"{k}: {format_scalar(v)}" for k, v in value.items())
    return format_scalar(value)


def text_table(title: str, rows: Iterable[tuple[str, str]]) -> str:
    """``title`` over an aligned two-column block of (name, value) rows.

    >>> print(text_table("PowerResult", [("power", "0.8"), ("n_tasks", "34")]))
    PowerResult
      power    0.8
      n_tasks  34
    """
    rows = list(rows)
    width = max((len(k) for k, _ in rows), default=0)
    body = [f"  {k.ljust(width)}  {v}".rstrip() for k, v in rows]
    return "\n".join([title, *body])


_CLASS = "evalstats-display"
_STYLE = f"<style>table.{_CLASS} th,table.{_CLASS} td{{{_CELL_STYLE}}}</style>"


def _cell(value: Any, tag: str = "td") -> str:
    return f"<{tag}>{value}</{tag}>"


def _frame_html(frame: pd.DataFrame) -> str:
    """A small frame as a nested table, its numbers formatted like every other value."""
    cols = list(frame.columns[:MAX_COLUMNS])
    head = "".join(_cell(html.escape(str(c)), "th") for c in cols)
    body = []
    for row in frame[cols].itertuples(index=False, name=None):
        body.append("<tr>" + "".join(_cell(html.escape(format_scalar(v))) for v in row) + "</tr>")
    more = ""
    if frame.shape[1] > MAX_COLUMNS:
        rest = ", ".join(str(c) for c in frame.columns[MAX_COLUMNS:])
        more = f"<div>and {frame.shape[1] - MAX_COLUMNS} more columns: {html.escape(rest)}</div>"
    return (
        f'<table class="{_CLASS}" style="{_TABLE_STYLE}"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>{more}"
    )


def html_table(title: str, rows: Iterable[tuple[str, Any]]) -> str:
    """A compact two-column HTML table, every string escaped; small frames nested.

    >>> html_table("R", [("method", "<b>")])  # doctest: +ELLIPSIS
    '<table ...><caption ...><b>R</b></caption>...<td>&lt;b&gt;</td></tr></tbody></table><style>...</style>'
    """
    out = []
    for name, value in rows:
        if isinstance(value, pd.DataFrame) and 0 < len(value) <= MAX_ROWS:
            shown = html.escape(summarize_value(value).split(":")[0]) + _frame_html(value)
        else:
            shown = html.escape(summarize_value(value))
        out.append(f"<tr>{_cell(html.escape(name), 'th')}{_cell(shown)}</tr>")
    return (
        f'<table class="{_CLASS}" style="{_TABLE_STYLE}">'
        f'<caption style="text-align:left"><b>{html.escape(title)}</b></caption>'
        f"<tbody>{''.join(out)}</tbody></table>{_STYLE}"
    )


class ResultDisplay:
    """Mixin for frozen result dataclasses: ``_repr_html_`` and a readable ``__repr__``.

    The estimate (``_display_estimate``, or the field ``solved_for`` names) shares a row with
    its interval; the other fields follow. A class keeps a ``__repr__`` it defines itself.

    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Demo(ResultDisplay):
    ...     estimate: float
    ...     ci_low: float
    ...     ci_high: float
    ...     confidence: float
    >>> r = Demo(0.52331, 0.38, 0.65, 0.95)
    >>> print(repr(r))
    Demo
      estimate [95 % CI]  0.5233 [0.38, 0.65]
      confidence          0.95
    >>> "<td" in r._repr_html_()
    True
    """

    __slots__ = ()
    _display_estimate: str = "estimate"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Put in the class namespace first: @dataclass never overwrites a method it has.
        super().__init_subclass__(**kwargs)
        if "__repr__" not in cls.__dict__ and cls.__repr__ is ResultDisplay.__repr__:
            cls.__repr__ = ResultDisplay.__repr__  # type: ignore[method-assign]

    def _display_rows(self) -> list[tuple[str, Any]]:
        names = [f.name for f in dataclasses.fields(self)]  # type: ignore[arg-type]
        solved = getattr(self, "solved_for", None)
        lead = solved if isinstance(solved, str) and solved in names else self._display_estimate
        if lead not in names or not {"ci_low", "ci_high"} <= set(names):
            return [(n, getattr(self, n)) for n in sorted(names, key=lambda n: n != lead)]
        conf, alpha = getattr(self, "confidence", None), getattr(self, "alpha", None)
        if isinstance(conf, float | int) and not isinstance(conf, bool):
            label = f"{lead} [{100 * conf:.4g} % CI]"
        elif isinstance(alpha, float | int) and not isinstance(alpha, bool):
            label = f"{lead} [{100 * (1 - 2 * alpha):.4g} % CI]"
        else:
            label = f"{lead} [ci_low, ci_high]"
        rest = [(n, getattr(self, n)) for n in names if n not in (lead, "ci_low", "ci_high")]
        return [(label, self._interval_text(lead)), *rest]

    def _interval_text(self, lead: str) -> str:
        est, lo, hi = (getattr(self, n) for n in (lead, "ci_low", "ci_high"))
        if isinstance(est, np.ndarray | Sequence) and not isinstance(est, str):
            e, lo_, hi_ = (np.ravel(np.asarray(x, dtype=float)) for x in (est, lo, hi))
            if e.size > MAX_ITEMS:
                return f"{summarize_value(e)}; intervals in .to_frame()"
            return "; ".join(_interval(*t) for t in zip(e, lo_, hi_, strict=True))
        return _interval(est, lo, hi)

    def __repr__(self) -> str:
        rows = [(k, summarize_value(v)) for k, v in self._display_rows()]
        return text_table(type(self).__name__, rows)

    def _repr_html_(self) -> str:
        return html_table(type(self).__name__, self._display_rows())


def count_text(n: int, n_pairs: float | None, ordered: bool) -> str:
    """How many were judged (``n`` units, ``n_pairs`` pairs among them, if known), in words.

    >>> count_text(165, 85, True), count_text(82, 82.0, False)
    ('165 pair-orders (85 pairs)', '82 pairs')
    """
    if n_pairs is not None and math.isfinite(float(n_pairs)):
        k = int(n_pairs)
        return f"{n} pair-orders ({k} pairs)" if n != k else f"{k} pairs"
    return f"{n} pair-orders" if ordered else f"{n} pairs"


_DATE = re.compile(r"[-_@]?(?:\d{8}|\d{4}-\d{2}-\d{2})$")
_ACRONYMS = {"gpt": "GPT", "llm": "LLM", "ai": "AI", "o1": "o1", "o3": "o3"}


def judge_model(judge: str) -> str:
    """A judge ``provider:model`` without its provider and a trailing date.

    >>> judge_model("anthropic:claude-sonnet-4-20250514"), judge_model("consensus:unanimous")
    ('claude-sonnet-4', 'consensus:unanimous')
    """
    provider, sep, model = judge.partition(":")
    if not sep or provider == "consensus":
        return judge
    return _DATE.sub("", model) or model


def judge_label(judge: str) -> str:
    """A judge as a reader names it in a sentence.

    >>> judge_label("anthropic:claude-sonnet-4-20250514"), judge_label("consensus:unanimous")
    ('Claude Sonnet 4', 'unanimous consensus')
    """
    provider, sep, rule = judge.partition(":")
    if sep and provider == "consensus":
        return f"{rule} consensus"
    pieces = [p for p in re.split(r"[-_\s]+", judge_model(judge)) if p]
    return " ".join(_ACRONYMS.get(p.lower(), p[:1].upper() + p[1:]) for p in pieces) or judge
