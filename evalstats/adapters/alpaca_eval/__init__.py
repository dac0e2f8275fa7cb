"""AlpacaEval judge annotations as a verdict frame, and its leaderboard recomputed.

AlpacaEval (tatsu-lab/alpaca_eval) has an LLM judge (the *annotator*) compare a
model's output (``generator_2``) with a baseline's (``generator_1``) on each
instruction and writes one record per comparison to ``annotations.json``.
:func:`load` validates such records and maps them through the generic
:mod:`evalstats.adapters.pairwise` adapter (this module is one configuration of it) into the
package's own verdict frame, from the
model's point of view (model = the WITH side, baseline = the WITHOUT side,
instruction = task, annotator = judge), so every statistic of
:mod:`evalstats.stats` applies; :func:`leaderboard_row` recomputes the
leaderboard columns AlpacaEval publishes with those statistics.

Mapping (``rubric`` is ``"alpaca_eval"``, ``order`` is NA, token and wall-clock
columns are NA):

=========================  ================================================
verdict frame              AlpacaEval record
=========================  ================================================
``task_id``                ``instruction_id`` (if absent: the first 12 hex
                           digits of the sha1 of ``instruction``)
``replicate``              1; the k-th record of the same (model, baseline,
                           annotator, instruction) gets k, with a warning
``judge``                  ``annotator``
``status`` / ``outcome``   from ``preference``, see below
``label``                  the preference as text (``"2.0"``, ``"1.5"``...)
``judge_usd``              ``price_per_example``
``raw``                    ``raw_completion`` (a non-string one as JSON)
``judgment_id``            ``<path as given>:<line>``
``model``, ``baseline``    ``generator_2``, ``generator_1``
``preference``             ``preference`` as given (float, NaN if missing)
``win_share``              ``preference - 1`` in [0, 1] for ok rows, else NaN
``len_with``/``len_without``  ``len_output_2``/``len_output_1`` (characters;
                           if absent, the length of ``output_2``/``output_1``)
``judge_time_s``           ``time_per_example``
``dataset``                ``dataset``
=========================  ================================================

Preference to verdict. ``preference`` is 1 when the judge prefers the baseline,
2 when it prefers the model and 1.5 for a draw; the weighted annotators give a
continuous value in [1, 2] (the judge's probability of preferring the model,
plus 1). AlpacaEval's own counts (``alpaca_eval.metrics.helpers``) are
``n_wins = #(preference > 1.5)``, ``n_draws = #(preference == 1.5)`` and
``n_wins_base = #(preference < 1.5)``, and its discrete win rate rounds a
continuous preference to the nearer side. The verdict follows the same rule,
so a continuous preference becomes a win when the judge leans towards the
model at all (> 1.5), a loss when it leans towards the baseline (< 1.5) and a
tie only when it is exactly 1.5; the continuous value stays in
``preference`` / ``win_share`` for the continuous win rate. A preference that
is missing, not a number, NaN or outside [1, 2] gives ``status == "invalid"``
(the row is kept, ``parse_error`` says why) and is left out of the leaderboard
counts, as AlpacaEval drops it. A preference of exactly 0 is AlpacaEval's
legacy encoding of a draw and is read as 1.5, as AlpacaEval does.

Duplicates. AlpacaEval evaluates each instruction once per (model, annotator).
If the same instruction appears again for the same (model, baseline,
annotator), the k-th occurrence (in file order) gets ``replicate == k`` and an
:class:`evalstats.EvalstatsWarning` names it: the rows are kept (AlpacaEval
would average over them too), and since the task is the cluster, the standard
errors of :func:`leaderboard_row` then treat the repeats as correlated — which
makes them differ from AlpacaEval's, which treats every record as
independent.

Layout: ``_records`` (reading the annotation files), ``_frame`` (the verdict frame) and
``_leaderboard`` (the leaderboard recomputed and compared).
"""

from __future__ import annotations

# Statistics that used to live here, re-exported under their old names.
from ...stats.models import LENGTH_MEASURES, LogisticFit, length_bias, logistic_fit
from ._frame import EXTRA_COLUMNS, GROUP_COLUMNS, RUBRIC, annotation_files, load
from ._leaderboard import (
    LEADERBOARD_COLUMNS,
    LEADERBOARD_FILE,
    REL_TOLERANCE,
    compare_leaderboard,
    judge_agreement_by_model,
    leaderboard_row,
    published_rows,
)

__all__ = [
    "EXTRA_COLUMNS",
    "GROUP_COLUMNS",
    "LEADERBOARD_COLUMNS",
    "RUBRIC",
    "LENGTH_MEASURES",
    "LEADERBOARD_FILE",
    "LogisticFit",
    "REL_TOLERANCE",
    "annotation_files",
    "compare_leaderboard",
    "judge_agreement_by_model",
    "leaderboard_row",
    "length_bias",
    "load",
    "logistic_fit",
    "published_rows",
]
