"""Customers: the customer row, identifiers and loyalty cards, consent, status; the read shape in
``reads.customer``.

Nothing here knows wallets: enrolment, the read with the balance and merge live in ``loyalty_core.accounts``.
"""
