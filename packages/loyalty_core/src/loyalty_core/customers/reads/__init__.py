"""The customers area's reads: the customer read model (``customer``) and the admin list of loyalty
cards (``cards``)."""
