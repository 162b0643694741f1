"""Generated data sets (no download): a table shaped like the broadband churn data of
González Vallejo (2024).

The thesis's Churn table (27,405 customers; tenure, contract length, months to contract
expiry, secured revenue, bandwidth in 9 categories, complaint calls, phone service; 16
columns with the bias after one-hot encoding) is not available offline. This generator
makes a table with the same columns, types and size, and a churn probability driven
mostly by contract expiry (the thesis's most important variable), then by complaints,
tenure and bandwidth, so that scale and the selection behaviour can be measured.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["make_churn_like", "BANDWIDTHS"]

#: The 9 bandwidth categories of the public churn file used by González Vallejo (2024).
BANDWIDTHS = ("10M", "BELOW 10M", "30M", "50M", "100M", "100M (FTTO)", "300M (FTTO)",
              "500M (FTTO)", "1000M (FTTO)")


def make_churn_like(n_samples=27405, *, random_state=0):
    """A churn-shaped table: 7 explanatory columns (one categorical) and a Yes/No target.

    Parameters
    ----------
    n_samples : int, default=27405
        The thesis's number of customers.
    random_state : int or None

    Returns
    -------
    pandas.DataFrame
        Columns ``tenure, contract_month, ce_expiry, secured_revenue, bandwidth,
        complaint_cnt, with_phone_service, churn``; one-hot encoding ``bandwidth`` gives
        6 + 9 = 15 numeric features (16 with the bias, as in the thesis).
    """
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 10:
        raise ValueError(f"n_samples must be an integer >= 10, got {n_samples!r}")
    rng = np.random.default_rng(random_state)
    n = int(n_samples)
    tenure = rng.integers(1, 121, size=n)
    contract = rng.choice([0, 12, 24], size=n, p=[0.3, 0.45, 0.25])
    ce_expiry = np.where(contract == 0, rng.integers(-12, 1, size=n),
                         rng.integers(-6, 25, size=n))
    bw_idx = rng.choice(len(BANDWIDTHS), size=n,
                        p=[0.25, 0.05, 0.2, 0.15, 0.15, 0.08, 0.06, 0.04, 0.02])
    revenue = np.round(np.exp(rng.normal(4.0 + 0.15 * bw_idx, 0.35)), 2)
    complaints = rng.poisson(0.2 + 0.1 * (bw_idx < 2), size=n)
    phone = rng.random(n) < 0.35
    bw_effect = np.array([0.3, 0.6, 0.0, -0.1, -0.2, -0.4, -0.5, -0.6, -0.8])[bw_idx]
    logit = (-1.0 - 0.18 * np.clip(ce_expiry, -12, 24) + 0.6 * complaints
             - 0.012 * tenure + bw_effect - 0.3 * phone + 0.002 * (revenue - 60))
    churn = rng.random(n) < 1.0 / (1.0 + np.exp(-logit))
    return pd.DataFrame({
        "tenure": tenure,
        "contract_month": contract,
        "ce_expiry": ce_expiry,
        "secured_revenue": revenue,
        "bandwidth": pd.Categorical(np.array(BANDWIDTHS)[bw_idx], categories=BANDWIDTHS),
        "complaint_cnt": complaints,
        "with_phone_service": phone.astype(int),
        "churn": np.where(churn, "Yes", "No"),
    })
