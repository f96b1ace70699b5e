"""The portal's customer imports, run as jobs: the file a shop uploads (``import_file``) and the
checked, queued and chunked runs (``imports``)."""
