"""Dual solvers of the SVM quadratic programs: SMO for the kernel formulations (C-SVC,
ε-SVR, ν-SVC, ν-SVR, one-class; :mod:`.smo`, :mod:`.nu_smo`), a dense active-set method
for small problems (:mod:`.active_set`), dual coordinate descent for linear models
(:mod:`.dual_cd`) and the Crammer–Singer multi-class dual (:mod:`.crammer_singer`). The
compiled loops live in the ``_*_kernels``, ``_smo_*`` modules."""
