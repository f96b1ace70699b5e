"""Tenancy's pure rules: who may do what (``access``) and the vendor's confirmation-code prefix
(``prefixes``)."""
