"""Primal solvers that scale with the data: sample-space (Woodbury) Newton for d > n,
truncated Newton with preconditioned CG for large sparse X, and the exact weighted-L1
working-set solver. Each follows the solver contract of ``solvers/base.py``."""
