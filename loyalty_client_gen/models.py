"""The source of the ``loyalty_client.models`` package: the structs of the schemas the operations
use, one module per area (the tag of the operations that use them), those of several areas in
``shared.py``, and ``__init__.py`` exporting them all, so ``from loyalty_client.models import X``
finds every one."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from loyalty_client_gen.generate import HEADER, area_of, documented, success
from loyalty_client_gen.schemas import PAGE_SOURCE, Types, class_name, page_item, refs, struct_source

SHARED = "shared"


def schema_areas(document: Mapping[str, Any], types: Types) -> dict[str, str]:
    """Each schema an operation reaches (envelopes aside), in document order, with its module."""
    areas: dict[str, set[str]] = {}
    for _, _, op in documented(document):
        reached = {*refs(op.get("requestBody")), *refs(op.get("parameters")), *refs(success(op)[0])}
        for name in types.closure({ref.rsplit("/", 1)[-1] for ref in reached}):
            areas.setdefault(name, set()).add(area_of(op))
    return {
        name: (next(iter(areas[name])) if len(areas[name]) == 1 else SHARED)
        for name in types.schemas
        if name in areas and not name.startswith("Envelope_")
    }


def request_schemas(document: Mapping[str, Any], types: Types) -> set[str]:
    names = {ref.rsplit("/", 1)[-1] for _, _, op in documented(document) for ref in refs(op.get("requestBody"))}
    return set(types.closure(names))


def imports(text: str, shared: set[str]) -> list[str]:
    """The imports a module's body needs (ruff sorts them)."""
    lines = ["from __future__ import annotations\n"]
    if "datetime." in text:
        lines.append("import datetime")
    typing = sorted(n for n in ("Any", "Generic", "Literal", "TypeVar") if re.search(rf"\b{n}\b", text))
    if typing:
        lines.append(f"from typing import {', '.join(typing)}")
    lines.append("import msgspec")
    used = sorted(shared & set(re.findall(r"\b[A-Z]\w*", re.sub(r'"[^"]*"', "", text))))
    if used:
        lines.append(f"from loyalty_client.models.{SHARED} import {', '.join(used)}")
    return lines


def models_sources(document: Mapping[str, Any], types: Types) -> dict[str, str]:
    schemas = document["components"]["schemas"]
    requests = request_schemas(document, types)
    areas = schema_areas(document, types)
    bodies: dict[str, list[str]] = {SHARED: [PAGE_SOURCE]}
    pages: dict[str, list[str]] = {}
    names: dict[str, list[str]] = {SHARED: ["Page"]}
    for name, area in areas.items():
        item = page_item(schemas[name])
        if item is not None:  # after the item's struct: ``class ProductPage(Page[Product])`` needs it
            of = types.of(item)
            page = f'\nclass {class_name(name)}(Page[{of}]):\n    """A page of ``{of}``."""\n'
            pages.setdefault(area, []).append(page)
        else:
            source = struct_source(name, schemas[name], types, request=name in requests)
            bodies.setdefault(area, []).append("\n" + source)
        names.setdefault(area, []).append(class_name(name))
    if pages and areas.get("Links") != SHARED:
        raise SystemExit("a page's Links is not shared: the generic Page in models/shared.py needs it there")
    shared = set(names[SHARED])
    texts = {}
    for area in sorted(names):
        body = "\n".join(bodies.get(area, []) + pages.get(area, []))
        own = set() if area == SHARED else shared
        texts[f"models/{area}.py"] = "\n".join([HEADER, *imports(body, own), "", body])
    texts["models/__init__.py"] = package_source(names)
    return texts


def package_source(names: Mapping[str, list[str]]) -> str:
    out = [
        HEADER,
        "from __future__ import annotations\n",
        *(f"from loyalty_client.models.{area} import {', '.join(sorted(found))}" for area, found in names.items()),
        "",
        "__all__ = [",
        *(f'    "{name}",' for name in sorted(n for found in names.values() for n in found)),
        "]",
    ]
    return "\n".join(out) + "\n"
