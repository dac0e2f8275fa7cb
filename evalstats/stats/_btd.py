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

__all__ = ["cells", "design", "fit", "outcome_probabilities", "sandwich", "task_scores"]


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
    init: np.ndarray | None = None,
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
    init : ndarray, shape (d,) or (B, d), optional
        Starting values (e.g. the data's fit for its bootstrap resamples: fewer Newton
        steps to the same maximum); by default 0 with ``delta`` at the pooled tie share.

    Returns
    -------
    (theta, converged)
        ``theta`` shape (B, d_u + ties); ``converged`` shape (B,), bool.
    """
    counts = _split_ties(np.asarray(counts, dtype=np.float64), ties)
    n_sets = counts.shape[0]
    d = x.shape[1] + int(ties)
    theta = np.zeros((n_sets, d))
    if init is not None:
        theta[:] = init
    elif ties:  # start delta at the pooled tie share (the MLE when every strength is equal)
        n = counts.sum(-1)
        share = np.clip(counts[..., 1].sum(1) / np.maximum(n.sum(1), 1e-300), 1e-6, 1 - 1e-6)
        theta[:, -1] = np.log(2 * share / (1 - share))
    converged = np.zeros(n_sets, dtype=bool)
    eye = ridge * np.eye(d)
    for _ in range(max_iter):
        # Only the sets still moving: a separated resample (an arm that never wins) creeps to
        # the bound for many steps, and the converged sets need not be recomputed meanwhile.
        act = np.flatnonzero(~converged)
        if not len(act):
            break
        grad, info = _grad_info(counts[act], theta[act], x, ties)
        step = np.linalg.solve(info + eye, grad[..., None])[..., 0]
        # Bounded steps: Newton on a concave likelihood, but a separated resample would jump.
        big = np.abs(step).max(axis=1, keepdims=True)
        step = np.where(big > 5.0, step * (5.0 / np.maximum(big, 1e-300)), step)
        theta[act] = np.clip(theta[act] + step, -30.0, 30.0)
        converged[act] = np.abs(step).max(axis=1) < tol
    return theta, converged


def _split_ties(counts: np.ndarray, ties: bool) -> np.ndarray:
    if ties:
        return counts
    half = counts[..., 1] / 2
    return np.stack([counts[..., 0] + half, np.zeros_like(half), counts[..., 2] + half], -1)


def _grad_info(
    counts: np.ndarray, theta: np.ndarray, x: np.ndarray, ties: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Score (B, d) and observed = expected information (B, d, d) of the log-likelihood."""
    n_sets, d_u = len(theta), x.shape[1]
    d = d_u + int(ties)
    w, t, lo = counts[..., 0], counts[..., 1], counts[..., 2]
    n = w + t + lo
    p = outcome_probabilities(theta[:, :d_u] @ x.T, theta[:, -1:] if ties else None)
    pw, pt, pl = p[..., 0], p[..., 1], p[..., 2]
    mu = (pw - pl) / 2
    grad = np.empty((n_sets, d))
    grad[:, :d_u] = ((w - lo) / 2 - n * mu) @ x
    info = np.empty((n_sets, d, d))
    var_u = (pw + pl) / 4 - mu**2
    # One matrix product with the cells' outer products: einsum's own path for this
    # contraction falls back to a slow non-BLAS loop for a few hundred sets.
    outer = (x[:, :, None] * x[:, None, :]).reshape(len(x), d_u * d_u)
    info[:, :d_u, :d_u] = ((n * var_u) @ outer).reshape(n_sets, d_u, d_u)
    if ties:
        grad[:, -1] = (t - n * pt).sum(1)
        info[:, :d_u, -1] = (n * (-mu * pt)) @ x
        info[:, -1, :d_u] = info[:, :d_u, -1]
        info[:, -1, -1] = (n * pt * (1 - pt)).sum(1)
    return grad, info


def task_scores(per_task, theta: np.ndarray, x: np.ndarray, ties: bool) -> np.ndarray:
    """Each task's score at each ``theta``, shape (B, T, d).

    ``per_task`` is a (T, C * 3) array or scipy sparse matrix of per-task cell counts. The
    score is linear in the counts, so a task's contribution is its counts times per-cell
    factors that depend on ``theta`` only.
    """
    m = per_task.toarray() if hasattr(per_task, "toarray") else np.asarray(per_task)
    n_t = m.shape[0]
    c = _split_ties(m.reshape(n_t, -1, 3), ties)
    w, t, lo = c[..., 0], c[..., 1], c[..., 2]
    n = w + t + lo
    d_u = x.shape[1]
    p = outcome_probabilities(theta[:, :d_u] @ x.T, theta[:, -1:] if ties else None)
    mu = (p[..., 0] - p[..., 2]) / 2  # (B, C)
    g_u = (((w - lo) / 2) @ x)[None] - np.einsum("tc,bc,ci->bti", n, mu, x, optimize=True)
    if not ties:
        return g_u
    g_d = t.sum(1)[None] - np.einsum("tc,bc->bt", n, p[..., 1], optimize=True)
    return np.concatenate([g_u, g_d[..., None]], axis=-1)


def sandwich(
    total: np.ndarray,
    scores: np.ndarray,
    weights: np.ndarray,
    theta: np.ndarray,
    x: np.ndarray,
    ties: bool,
) -> np.ndarray:
    """Cluster-robust (CR1) covariance of ``theta`` per count set, shape (B, d, d).

    ``total`` (B, C, 3) are the set's counts, ``scores`` (B, T, d) the tasks' scores at
    ``theta`` and ``weights`` (B, T) how often each task is in the set (1 for the data).
    """
    _, info = _grad_info(_split_ties(total, ties), theta, x, ties)
    n_clusters = weights.sum(1)[:, None, None]
    meat = np.einsum("bt,bti,btj->bij", weights, scores, scores, optimize=True)
    meat *= n_clusters / np.maximum(n_clusters - 1, 1)
    bread = np.linalg.pinv(info)
    return bread @ meat @ bread
