"""Numpy core: permuted SGD, rates, the dependence fit, the objectives."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurips25.perm_sgd import (
    GraB,
    Incremental,
    RandomReshuffling,
    fit_dependence,
    order_error,
    permuted_sgd,
    rate,
)
from neurips25.perm_sgd.problems import L2LogisticRegression, SoftmaxRegression


@pytest.fixture
def logistic():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.where(X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.3 * rng.normal(size=40) > 0, 1, -1)
    return L2LogisticRegression(X, y, alpha=0.1)


def test_order_error_hand_examples():
    v = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    assert order_error(v, [0, 1, 2, 3]) == 2.0
    assert order_error(v, [0, 2, 1, 3]) == 1.0
    assert order_error(v) == 2.0  # identity by default


def test_order_error_bad_input():
    with pytest.raises(ValueError, match="permutation of range"):
        order_error(np.ones((3, 2)), [0, 0, 1])
    with pytest.raises(ValueError, match="shape \\(n, d\\)"):
        order_error(np.ones(3))
    with pytest.raises(ValueError, match="NaN or inf"):
        order_error(np.array([[np.nan], [1.0]]))


def test_permuted_sgd_is_the_epoch_recursion():
    # slow transcription of x_{q,i+1} = x_{q,i} - eta grad f_{pi_q(i)}(x_{q,i}) on quadratics
    a = np.random.default_rng(1).normal(size=(6, 2))
    got = permuted_sgd(lambda i, x: x - a[i], np.ones(2), 6, 3, 0.1, RandomReshuffling(6, seed=4))
    x, ref = np.ones(2), RandomReshuffling(6, seed=4)
    for _ in range(3):
        for i in ref.next_epoch():
            x = x - 0.1 * (x - a[i])
    assert np.allclose(got, x)


def test_permuted_sgd_orders_rank_as_theory_on_logistic(logistic):
    # same step size, same epochs: GraB <= RR <= label-sorted IG in F - F*
    f_star = logistic.loss(logistic.solve())
    n, K = logistic.n, 20
    eta = 2 * np.log(n * K) / (logistic.mu * n * K)
    err = {}
    for name, pol in [("ig", Incremental(n, order=np.argsort(logistic.y, kind="stable"))),
                      ("rr", RandomReshuffling(n, seed=0)), ("grab", GraB(n, seed=0))]:
        x = permuted_sgd(logistic.grad_i, np.zeros(logistic.dim), n, K, eta, pol)
        err[name] = logistic.loss(x) - f_star
    assert err["grab"] < err["rr"] < err["ig"]


def test_permuted_sgd_bad_input():
    pol = RandomReshuffling(3)
    with pytest.raises(ValueError, match="policy.n=3"):
        permuted_sgd(lambda i, x: x, np.zeros(1), 4, 1, 0.1, pol)
    with pytest.raises(ValueError, match="lr must be"):
        permuted_sgd(lambda i, x: x, np.zeros(1), 3, 1, -0.1, pol)
    with pytest.raises(TypeError, match="PermutationPolicy"):
        permuted_sgd(lambda i, x: x, np.zeros(1), 3, 1, 0.1, [0, 1, 2])
    with pytest.raises(ValueError, match="x0 contains NaN"):
        permuted_sgd(lambda i, x: x, np.array([np.nan]), 3, 1, 0.1, pol)


def test_rate_table():
    assert rate("rr", 100, 10) == pytest.approx(1e-4)
    assert rate("grab", 100, 10) == pytest.approx(1e-6)
    assert rate("ig", 100, 10) == pytest.approx(1e-2)
    assert rate("flipflop", 8, 1, setting="nonconvex") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="category must be one of"):
        rate("sgd", 10, 10)
    with pytest.raises(ValueError, match="setting must be"):
        rate("rr", 10, 10, setting="convex")


@settings(max_examples=20, deadline=None)
@given(A=st.floats(0.0, 0.9), B=st.floats(0.0, 3.0), C=st.floats(0.1, 5.0), seed=st.integers(0, 1000))
def test_fit_dependence_recovers_planted_coefficients(A, B, C, seed):
    rng = np.random.default_rng(seed)
    drift = rng.uniform(0, 2, size=(3, 12))
    phi = np.zeros((3, 12))
    phi[:, 0] = rng.uniform(5, 10, size=3)
    for q in range(1, 12):
        phi[:, q] = A * phi[:, q - 1] + B * drift[:, q] + C
    fit = fit_dependence(phi, drift)
    assert fit.A == pytest.approx(A, abs=1e-6) and fit.B == pytest.approx(B, abs=1e-6)
    assert fit.C == pytest.approx(C, abs=1e-5)


def test_fit_dependence_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        fit_dependence(np.ones(5), np.ones(4))
    with pytest.raises(ValueError, match="at least 4 epochs"):
        fit_dependence(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match=">= 0"):
        fit_dependence(-np.ones(5), np.ones(5))


def test_logistic_gradients_and_solution(logistic):
    w = np.random.default_rng(2).normal(size=logistic.dim)
    eps = 1e-6
    fd = np.array([(logistic.loss(w + eps * e) - logistic.loss(w - eps * e)) / (2 * eps)
                   for e in np.eye(logistic.dim)])
    assert np.allclose(logistic.grad(w), fd, atol=1e-7)
    assert np.allclose(logistic.grads(w).mean(axis=0), logistic.grad(w))
    assert np.allclose(logistic.grads(w)[7], logistic.grad_i(7, w))
    assert np.linalg.norm(logistic.grad(logistic.solve())) < 1e-12
    with pytest.raises(ValueError, match="labels in"):
        L2LogisticRegression(np.ones((2, 2)), np.array([0, 2]), alpha=0.1)
    with pytest.raises(ValueError, match="alpha must be"):
        L2LogisticRegression(np.ones((2, 2)), np.array([0, 1]), alpha=0.0)


def test_softmax_gradient_matches_finite_differences():
    rng = np.random.default_rng(3)
    prob = SoftmaxRegression(rng.normal(size=(15, 3)), rng.integers(0, 4, size=15), 4, alpha=0.01)
    w = rng.normal(size=prob.dim)
    eps = 1e-6
    fd = np.array([(prob.loss(w + eps * e) - prob.loss(w - eps * e)) / (2 * eps) for e in np.eye(prob.dim)])
    assert np.allclose(prob.grad(w), fd, atol=1e-7)
    with pytest.raises(ValueError, match="ints in range"):
        SoftmaxRegression(np.ones((2, 2)), np.array([0, 5]), 4, alpha=0.1)
