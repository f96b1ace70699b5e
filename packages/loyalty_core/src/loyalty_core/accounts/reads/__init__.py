"""The reads of a customer with its wallet: the customer read with its balance (``customer``), the
back office's search (``search``) and the customers' export (``export``)."""
