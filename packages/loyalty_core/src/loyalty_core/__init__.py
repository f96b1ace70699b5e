"""Loyalty domain: tenancy, catalogue, customers, wallet and ledger. Imports no web framework."""

__version__ = "0.1.0"
