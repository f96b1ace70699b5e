"""Litestar layer of the loyalty back end."""

__version__ = "0.1.0"
