"""Customers: registration, identifiers and loyalty cards, lookup, consent, deactivation, anonymization."""
