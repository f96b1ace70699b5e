"""The vendor's product catalogue: products keyed on the vendor's own ``external_id``."""
