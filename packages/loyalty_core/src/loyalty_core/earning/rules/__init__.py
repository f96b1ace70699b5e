"""Earning's pure rules: the engine that scores a purchase (``engine``), its inputs (``terms``), the
customer moments' dates (``moments``), what a return takes back (``returns``) and the admin bounds of
earn rules and campaigns (``validation``)."""
