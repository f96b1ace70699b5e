"""Wire conventions shared by every area: the envelope, error codes and statuses, request ids,
body and query reading, validation, pagination and path ids."""
