"""The library's version: one place, read by the package, the report and the command line."""

__version__ = "0.2.0"
