"""The version of the distribution (``gpuforest``): the one place it is written.

``pyproject.toml`` reads it from here, and every package exports it as ``__version__``.
"""

__version__ = "0.1.0"
