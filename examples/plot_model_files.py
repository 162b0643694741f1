"""
Model files: save, load, predict the same
=========================================

:func:`~bisvm.save_model` writes a fitted estimator as data: a JSON header (class,
parameters, feature names, scaling, the library version) and the arrays in an ``.npz``
archive, never a pickle, so loading a model file cannot run code.
:func:`~bisvm.load_model` reads it back, rebuilds the estimator from its parameters and
arrays, and checks the file before using it. This example saves a fitted
:class:`~bisvm.BilevelSVC` with its column names, loads it, and checks that the loaded
model predicts exactly what the fitted one does.
"""

# %%
# Fit and save
# ------------
import os
import tempfile

import matplotlib.pyplot as plt
import numpy as np
from sklearn.model_selection import train_test_split

import bisvm

data = bisvm.load_dataset("breast-cancer")
X_train, X_test, y_train, y_test = train_test_split(
    data.X, data.y, test_size=0.25, stratify=data.y, random_state=0
)
est = bisvm.BilevelSVC(model="scalar", random_state=0).fit(X_train, y_train)

directory = tempfile.mkdtemp()
path = os.path.join(directory, "cancer.bisvm")
bisvm.save_model(est, path, feature_names=list(data.feature_names))
print(f"wrote {os.path.basename(path)}: {os.path.getsize(path)} bytes")

# %%
# Load and compare
# ----------------
# ``load_model`` returns a record: the estimator, the column names, the scaling and the
# file's metadata.
loaded = bisvm.load_model(path)
model = loaded.estimator
print(type(model).__name__, "with columns", loaded.feature_names[:3], "...")
print("written by bisvm", loaded.meta.get("bisvm_version", loaded.meta.get("version")))
same_labels = np.array_equal(model.predict(X_test), est.predict(X_test))
same_values = np.array_equal(model.decision_function(X_test), est.decision_function(X_test))
print(f"same labels: {same_labels}; bit-identical decision values: {same_values}")

# %%
# The decision values of the fitted and of the loaded model lie on the diagonal.
fig, ax = plt.subplots(figsize=(4.5, 4.5))
ax.scatter(est.decision_function(X_test), model.decision_function(X_test), s=10)
lims = ax.get_xlim()
ax.plot(lims, lims, "k--", lw=0.8)
ax.set_xlabel("decision value, fitted model")
ax.set_ylabel("decision value, loaded model")
ax.set_title("save_model / load_model round trip")
fig.tight_layout()

os.remove(path)
os.rmdir(directory)
