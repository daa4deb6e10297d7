#!/usr/bin/python3
"""bench/search_optuna.py — the reference for `bench/run search`: Optuna's TPESampler (seed=seed,
its defaults otherwise) on the test functions of trials/testfn.c over the same domains as
bench/configs/search_FN.yaml. For each seed prints `SEED BEST_AFTER_50 BEST_AFTER_TRIALS`.
Run with /usr/bin/python3 (Debian's python3-optuna).

  /usr/bin/python3 bench/search_optuna.py --fn branin --seeds 10 --trials 200
"""
import argparse
import math
import sys

import optuna

PI = math.pi


def branin(x):
    b, c, t = 5.1 / (4 * PI * PI), 5 / PI, 1 / (8 * PI)
    u = x[1] - b * x[0] * x[0] + c * x[0] - 6
    return u * u + 10 * (1 - t) * math.cos(x[0]) + 10


H_ALPHA = [1.0, 1.2, 3.0, 3.2]
H_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
       [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
H_P = [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
       [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]


def hartmann(x, a, p):
    """Hartmann-d for d = len(x): A and P (P x 1e-4) of that size, the alphas shared."""
    f = 0.0
    for i in range(4):
        s = sum(a[i][j] * (x[j] - p[i][j] * 1e-4) ** 2 for j in range(len(x)))
        f -= H_ALPHA[i] * math.exp(-s)
    return f


def hartmann6(x):
    return hartmann(x, H_A, H_P)


def styblinski_tang(x):
    return sum(v ** 4 - 16 * v * v + 5 * v for v in x) / 2


OFFSET = {"a": 0.0, "b": 0.5, "c": 2.0}


def mixed(c, lr, x):
    e = math.log10(lr) + 3
    return e * e + (x - 1) * (x - 1) + OFFSET[c]


def rosenbrock(x):
    return sum(100 * (x[i + 1] - x[i] ** 2) ** 2 + (x[i] - 1) ** 2 for i in range(len(x) - 1))


def ackley(x):
    n = len(x)
    sq = sum(v * v for v in x)
    cs = sum(math.cos(2 * PI * v) for v in x)
    return -20 * math.exp(-0.2 * math.sqrt(sq / n)) - math.exp(cs / n) + 20 + math.e


def levy(x):
    w = [1 + (v - 1) / 4 for v in x]
    f = math.sin(PI * w[0]) ** 2 + (w[-1] - 1) ** 2 * (1 + math.sin(2 * PI * w[-1]) ** 2)
    return f + sum((wi - 1) ** 2 * (1 + 10 * math.sin(PI * wi + 1) ** 2) for wi in w[:-1])


def rastrigin(x):
    return 10 * len(x) + sum(v * v - 10 * math.cos(2 * PI * v) for v in x)


def six_hump_camel(x):
    a, b = x
    return (4 - 2.1 * a * a + a ** 4 / 3) * a * a + a * b + (-4 + 4 * b * b) * b * b


def goldstein_price(x):
    a, b = x
    u = 1 + (a + b + 1) ** 2 * (19 - 14 * a + 3 * a * a - 14 * b + 6 * a * b + 3 * b * b)
    v = 30 + (2 * a - 3 * b) ** 2 * (18 - 32 * a + 12 * a * a + 48 * b - 36 * a * b + 27 * b * b)
    return u * v


H3_A = [[3, 10, 30], [0.1, 10, 35], [3, 10, 30], [0.1, 10, 35]]
H3_P = [[3689, 1170, 2673], [4699, 4387, 7470], [1091, 8732, 5547], [381, 5743, 8828]]


def hartmann3(x):
    return hartmann(x, H3_A, H3_P)


def michalewicz(x):
    return -sum(math.sin(v) * math.sin((i + 1) * v * v / PI) ** 20 for i, v in enumerate(x))


K_OFFSET = {"relu": 0.0, "tanh": 1.0, "gelu": 0.25, "silu": 0.5}


def int_mix(a, b, lr, k):
    e = math.log10(lr) + 2
    return (a - 3) ** 2 / 10 + (b + 7) ** 2 / 10 + e * e + K_OFFSET[k]


# Functions of x0..x(n-1): name -> (function, n, low, high).
XS = {
    "rosenbrock4": (rosenbrock, 4, -5, 10),
    "ackley5": (ackley, 5, -32.768, 32.768),
    "levy5": (levy, 5, -10, 10),
    "rastrigin5": (rastrigin, 5, -5.12, 5.12),
    "goldstein_price": (goldstein_price, 2, -2, 2),
    "hartmann3": (hartmann3, 3, 0, 1),
    "michalewicz5": (michalewicz, 5, 0, PI),
}


def objective(fn):
    """The objective over the same space as bench/configs/search_FN.yaml."""
    if fn == "branin":
        return lambda t: branin([t.suggest_float("x0", -5, 10), t.suggest_float("x1", 0, 15)])
    if fn == "hartmann6":
        return lambda t: hartmann6([t.suggest_float("x%d" % i, 0, 1) for i in range(6)])
    if fn == "styblinski_tang10":
        return lambda t: styblinski_tang([t.suggest_float("x%d" % i, -5, 5) for i in range(10)])
    if fn == "mixed":
        return lambda t: mixed(t.suggest_categorical("c", ["a", "b", "c"]),
                               t.suggest_float("lr", 1e-5, 1, log=True), t.suggest_float("x", -3, 3))
    if fn in XS:
        f, n, lo, hi = XS[fn]
        return lambda t: f([t.suggest_float("x%d" % i, lo, hi) for i in range(n)])
    if fn == "six_hump_camel":
        return lambda t: six_hump_camel([t.suggest_float("x0", -3, 3), t.suggest_float("x1", -2, 2)])
    if fn == "int_mix":
        return lambda t: int_mix(t.suggest_int("a", -20, 20), t.suggest_int("b", -20, 20),
                                 t.suggest_float("lr", 1e-4, 1, log=True),
                                 t.suggest_categorical("k", ["relu", "tanh", "gelu", "silu"]))
    raise SystemExit("unknown fn %s" % fn)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fn", required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=200)
    a = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    obj = objective(a.fn)
    for seed in range(1, a.seeds + 1):
        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed), direction="minimize")
        study.optimize(obj, n_trials=a.trials)
        vals = [t.value for t in sorted(study.trials, key=lambda t: t.number)]
        best50 = min(vals[:50])
        print("%d %.17g %.17g" % (seed, best50, min(vals)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
