"""Builds wallet passes from a plain description of a loyalty card. Knows no model of the service."""

__version__ = "0.1.0"
