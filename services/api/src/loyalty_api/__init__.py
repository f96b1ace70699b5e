"""The deployable loyalty service."""

__version__ = "0.1.0"
