"""The latent probit outcome model: WITH/WITHOUT verdicts with known truth.

Each task has an effect ``u_t ~ N(0, sigma^2)``, each pair (task, replicate) a true quality
difference ``y = u_t + e`` with ``e ~ N(0, 1)``, and the outcome is ``loss`` / ``tie`` / ``win``
as ``y`` falls below, between or above two thresholds. ``sigma^2 = icc / (1 - icc)`` so that
``icc`` is the intra-class correlation of ``y`` on the latent scale. Thresholds sit at quantiles
of ``N(0, 1 + sigma^2)``, which makes the marginal outcome probabilities equal the stated
``p_win``, ``p_tie``, ``p_loss`` whatever the ICC. A judge sees ``y + eta`` with
``eta ~ N(0, judge_noise^2)`` and thresholds rescaled to the larger variance, so judge noise
only lowers agreement.

It is a statistical model, so it lives in ``stats``: the coverage and power simulations draw
from it here, and :mod:`evalstats.simulation` builds whole synthetic evaluations on top of it
(``stats`` never imports ``simulate``).
"""

from __future__ import annotations

import numpy as np
from scipy import special

from .._validate import check_positive_int

__all__ = ["check_outcome_probs", "draw_outcomes", "latent_thresholds"]

_SQRT2 = np.sqrt(2.0)


def _probit(p: np.ndarray | float) -> np.ndarray:
    return _SQRT2 * special.erfinv(2.0 * np.asarray(p, dtype=float) - 1.0)


def check_outcome_probs(p_win: float, p_tie: float, p_loss: float) -> None:
    """``ValueError`` unless the three outcome probabilities are non-negative and sum to 1."""
    probs = np.array([p_win, p_tie, p_loss], dtype=float)
    if np.any(probs < 0) or not np.isclose(probs.sum(), 1.0, atol=1e-9):
        raise ValueError(
            f"p_win, p_tie, p_loss must be non-negative and sum to 1, got {p_win}, {p_tie}, {p_loss}"
        )


def latent_thresholds(p_tie: float, p_loss: float, scale: float) -> tuple[float, float]:
    """Thresholds on a latent ``N(0, scale^2)`` giving P(loss)=p_loss, P(tie)=p_tie.

    >>> lo, hi = latent_thresholds(p_tie=0.5, p_loss=0.25, scale=1.0)
    >>> round(lo, 4), round(hi, 4)  # the quartiles of N(0, 1)
    (-0.6745, 0.6745)
    """
    lo = float(_probit(p_loss)) * scale if p_loss > 0 else -np.inf
    hi_p = p_loss + p_tie
    hi = float(_probit(hi_p)) * scale if hi_p < 1 else np.inf
    return lo, hi


def draw_outcomes(
    n_tasks: int,
    n_replicates: int,
    *,
    p_win: float,
    p_tie: float,
    p_loss: float,
    icc: float,
    n_judges: int = 1,
    judge_noise: float = 0.0,
    n_evals: int = 1,
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Draw judge outcomes for many simulated evaluations at once.

    Parameters
    ----------
    n_tasks, n_replicates : int
        Design: tasks (clusters) and replicated pairs per task.
    p_win, p_tie, p_loss : float
        True marginal outcome probabilities (WITH's point of view); sum to 1.
    icc : float
        Intra-class correlation of the latent quality difference, in [0, 1).
    n_judges : int
        Number of judges; each adds independent ``N(0, judge_noise^2)`` noise.
    judge_noise : float
        Standard deviation of a judge's noise relative to the unit pair noise.
    n_evals : int
        Number of independent evaluations to draw.
    rng : Generator or int, optional
        Random source or seed.

    Returns
    -------
    ndarray of int8, shape (n_evals, n_tasks, n_replicates, n_judges)
        Outcome codes 0 = loss, 1 = tie, 2 = win.

    Examples
    --------
    >>> from evalstats.stats.outcome_model import draw_outcomes
    >>> y = draw_outcomes(15, 6, p_win=0.4, p_tie=0.4, p_loss=0.2, icc=0.3, rng=0)
    >>> y.shape
    (1, 15, 6, 1)
    """
    check_outcome_probs(p_win, p_tie, p_loss)
    if not 0.0 <= icc < 1.0:
        raise ValueError(f"icc must be in [0, 1), got {icc}")
    if judge_noise < 0:
        raise ValueError(f"judge_noise must be >= 0, got {judge_noise}")
    n_tasks = check_positive_int(n_tasks, "n_tasks")
    n_replicates = check_positive_int(n_replicates, "n_replicates")
    n_judges = check_positive_int(n_judges, "n_judges")
    n_evals = check_positive_int(n_evals, "n_evals")
    gen = np.random.default_rng(rng)
    sigma = np.sqrt(icc / (1.0 - icc))
    u = gen.standard_normal((n_evals, n_tasks, 1, 1)) * sigma
    e = gen.standard_normal((n_evals, n_tasks, n_replicates, 1))
    latent = u + e
    if judge_noise > 0:
        latent = latent + judge_noise * gen.standard_normal(
            (n_evals, n_tasks, n_replicates, n_judges)
        )
    else:
        latent = np.broadcast_to(latent, (n_evals, n_tasks, n_replicates, n_judges))
    scale = np.sqrt(1.0 + sigma**2 + judge_noise**2)
    lo, hi = latent_thresholds(p_tie, p_loss, scale)
    return (latent >= lo).astype(np.int8) + (latent >= hi).astype(np.int8)
