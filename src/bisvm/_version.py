"""The package version (its own module: anything may import it without importing bisvm's
public names)."""

__version__ = "0.1.0"
