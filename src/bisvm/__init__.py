"""bisvm: support vector machines that tune themselves.

Public API only; see ``DESIGN.md`` for the layers.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
