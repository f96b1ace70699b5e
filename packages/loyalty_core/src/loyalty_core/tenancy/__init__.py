"""Tenancy: plans, vendors, branches, API clients, the tokens issued to them and who may do what."""
