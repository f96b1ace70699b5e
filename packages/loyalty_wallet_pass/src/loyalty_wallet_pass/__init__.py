"""Builds wallet passes from a plain description of a loyalty card. Knows no model of the service.

- ``card``: ``PassCard``, ``PassBranding``, ``Rgb`` (what a pass shows)
- ``apple``: ``build_pkpass`` (platform_a, signed ``.pkpass``)
- ``google``: ``SaveLinkIssuer``, ``build_save_link``, ``read_save_link`` (platform_b)
- ``identity``: ``SigningIdentity`` (certificate, key, intermediate; PEM in and out)
- ``sealing``: ``encrypt``, ``decrypt`` (signing keys at rest)
- ``platform``: ``PassPlatform``, ``LocalPassPlatform`` (obtaining a shop's identity)
- ``authority``: ``CertificateAuthority`` (the stand-in's root, intermediate and pass certificates)
- ``manifest``, ``images``: the bundle's manifest and PNG images
"""

__version__ = "0.1.0"
