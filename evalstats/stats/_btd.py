"""Bradley-Terry with Davidson ties and a position effect, fitted to many count sets at once.

A judgment of arm ``i`` (as ``a``) against ``j`` with ``s`` = +1 (``i`` shown first), -1
(``j`` shown first) or 0 (unknown) has ``u = beta_i - beta_j + gamma s`` and::

    P(i wins) = e^{u/2} / D,   P(tie) = nu / D,   P(j wins) = e^{-u/2} / D,
    D = e^{u/2} + e^{-u/2} + nu,                   nu = e^delta

(Davidson 1970: ``nu`` = 0 is Bradley-Terry; ``P(i wins | not a tie)`` is the logistic
``1 / (1 + e^{-u})``). The log-likelihood depends on the data only through the counts of
(win, tie, loss) per *cell* (ordered pair and position), and it is an exponential family in
``(u, delta)``, so Newton's method and Fisher scoring coincide: the Hessian is minus the count
times the covariance of the sufficient statistics ``(+-1/2, 0)`` / ``(0, 1)``. Every bootstrap
resample is a different count array over the same cells, so :func:`fit` runs Newton on all of
them at once (batched ``numpy.linalg.solve`` of (d x d) systems; no loop over resamples).
``beta_0 = 0`` identifies the strengths; callers centre them.
"""

from __future__ import annotations

import numpy as np

__all__ = ["cells", "design", "fit", "outcome_probabilities"]


def cells(
    a: np.ndarray, b: np.ndarray, pos: np.ndarray, y: np.ndarray, n_arms: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Orient every row to ``a < b`` and index its cell.

    Returns ``(cell_keys, cell_of_row, outcome_col)``: the distinct ``(i, j, s)`` triples
    (shape (C, 3)), each row's cell and its outcome column (0 win of ``i``, 1 tie, 2 loss).
    """
    swap = a > b
    i = np.where(swap, b, a)
    j = np.where(swap, a, b)
    s = np.where(swap, -pos, pos).astype(np.int64)
    col = np.where(swap, y, 2 - y)  # y: 0 loss / 1 tie / 2 win from a's view
    key = (i * n_arms + j) * 3 + (s + 1)
    uniq, cell = np.unique(key, return_inverse=True)
    keys = np.stack([uniq // 3 // n_arms, uniq // 3 % n_arms, uniq % 3 - 1], axis=1)
    return keys, cell.astype(np.int64), col.astype(np.int64)


def design(keys: np.ndarray, n_arms: int, position: bool) -> np.ndarray:
    """Design rows of ``u`` per cell: +1 at ``beta_i``, -1 at ``beta_j`` (``beta_0`` dropped),
    then ``s`` for ``gamma`` when ``position``."""
    x = np.zeros((len(keys), n_arms + int(position)))
    r = np.arange(len(keys))
    x[r, keys[:, 0]] += 1.0
    x[r, keys[:, 1]] -= 1.0
    if position:
        x[:, n_arms] = keys[:, 2]
    return x[:, 1:]


def outcome_probabilities(u: np.ndarray, delta: np.ndarray | float | None) -> np.ndarray:
    """``(P(win), P(tie), P(loss))`` stacked on a last axis, stable for large ``|u|``.

    >>> outcome_probabilities(np.array([0.0]), np.log(1.0)).round(4).tolist()
    [[0.3333, 0.3333, 0.3333]]
    """
    half = np.asarray(u, dtype=np.float64) / 2
    logs = [half, np.full_like(half, -np.inf) if delta is None else np.zeros_like(half), -half]
    if delta is not None:
        logs[1] = logs[1] + np.asarray(delta, dtype=np.float64)
    stacked = np.stack(logs, axis=-1)
    top = stacked.max(axis=-1, keepdims=True)
    e = np.exp(stacked - top)
    return e / e.sum(axis=-1, keepdims=True)


def fit(
    counts: np.ndarray,
    x: np.ndarray,
    *,
    ties: bool = True,
    max_iter: int = 100,
    tol: float = 1e-10,
    ridge: float = 1e-8,
) -> tuple[np.ndarray, np.ndarray]:
    """Maximum-likelihood ``(beta_1.., gamma, delta)`` for every count set at once.

    Parameters
    ----------
    counts : ndarray, shape (B, C, 3)
        (win, tie, loss) counts of each cell's first arm, per count set (may be fractional,
        as in a prediction-powered objective).
    x : ndarray, shape (C, d_u)
        :func:`design` rows.
    ties : bool
        Davidson ties (a ``delta`` parameter last); ``False`` splits each tie into half a win
        and half a loss (Bradley-Terry).
    ridge : float
        A tiny ridge on the Hessian so a resample where an arm never wins does not make it
        singular; such a strength runs to the step bound instead of to infinity.

    Returns
    -------
    (theta, converged)
        ``theta`` shape (B, d_u + ties); ``converged`` shape (B,), bool.
    """
    counts = np.asarray(counts, dtype=np.float64)
    if not ties:
        half = counts[..., 1] / 2
        counts = np.stack([counts[..., 0] + half, np.zeros_like(half), counts[..., 2] + half], -1)
    n_sets, _, _ = counts.shape
    d_u = x.shape[1]
    d = d_u + int(ties)
    w, t, lo = counts[..., 0], counts[..., 1], counts[..., 2]
    n = w + t + lo
    s_u = (w - lo) / 2
    theta = np.zeros((n_sets, d))
    if ties:  # start delta at the pooled tie share (the MLE when every strength is equal)
        share = np.clip(t.sum(1) / np.maximum(n.sum(1), 1e-300), 1e-6, 1 - 1e-6)
        theta[:, -1] = np.log(2 * share / (1 - share))
    converged = np.zeros(n_sets, dtype=bool)
    eye = ridge * np.eye(d)
    for _ in range(max_iter):
        u = theta[:, :d_u] @ x.T
        p = outcome_probabilities(u, theta[:, -1:] if ties else None)
        pw, pt, pl = p[..., 0], p[..., 1], p[..., 2]
        mu = (pw - pl) / 2
        grad = np.empty((n_sets, d))
        grad[:, :d_u] = (s_u - n * mu) @ x
        hess = np.empty((n_sets, d, d))
        var_u = (pw + pl) / 4 - mu**2
        hess[:, :d_u, :d_u] = np.einsum("bc,ci,cj->bij", n * var_u, x, x, optimize=True)
        if ties:
            grad[:, -1] = (t - n * pt).sum(1)
            cov = n * (-mu * pt)
            hess[:, :d_u, -1] = cov @ x
            hess[:, -1, :d_u] = hess[:, :d_u, -1]
            hess[:, -1, -1] = (n * pt * (1 - pt)).sum(1)
        step = np.linalg.solve(hess + eye, grad[..., None])[..., 0]
        # Bounded steps: Newton on a concave likelihood, but a separated resample would jump.
        big = np.abs(step).max(axis=1, keepdims=True)
        step = np.where(big > 5.0, step * (5.0 / np.maximum(big, 1e-300)), step)
        step[converged] = 0.0
        theta = np.clip(theta + step, -30.0, 30.0)
        converged |= np.abs(step).max(axis=1) < tol
        if converged.all():
            break
    return theta, converged
