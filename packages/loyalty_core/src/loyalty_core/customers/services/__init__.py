"""Customer writes by concern, each a part of ``accounts.customers.CustomerService``: identifiers and
cards, profile updates, consent, status changes; ``ports`` names what the area above gives them."""
