"""The package's version: one place, read by the build (``[tool.hatch.version]``) and the code."""

__version__ = "0.1.0"
