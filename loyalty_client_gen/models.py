"""The source of the ``loyalty_client.models`` package: the structs of the schemas the operations
use, one module per area (the tag of the operations that use them), those of several areas in
``shared.py``, and ``__init__.py`` exporting them all, so ``from loyalty_client.models import X``
finds every one."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from loyalty_client_gen.generate import HEADER, area_of, documented, success
from loyalty_client_gen.schemas import PAGE_SOURCE, Struct, Types, class_name, enum_source, page_item, refs, struct_of

SHARED = "shared"
FOLD_LINES = 6
"""Structs of one module that share this many leading fields share them through a base instead:
the length at which the repository's duplication check counts a repeat."""


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
    bodies: dict[str, list[str | Struct]] = {SHARED: [PAGE_SOURCE]}
    pages: dict[str, list[str]] = {}
    names: dict[str, list[str]] = {SHARED: ["Page"]}
    for name, area in areas.items():
        item = page_item(schemas[name])
        if item is not None:  # after the item's struct: ``class ProductPage(Page[Product])`` needs it
            of = types.of(item)
            page = f'\nclass {class_name(name)}(Page[{of}]):\n    """A page of ``{of}``."""\n'
            pages.setdefault(area, []).append(page)
        elif "enum" in schemas[name]:
            bodies.setdefault(area, []).append(enum_source(name, schemas[name]))
        else:
            bodies.setdefault(area, []).append(struct_of(name, schemas[name], types, request=name in requests))
        names.setdefault(area, []).append(class_name(name))
    if pages and areas.get("Links") != SHARED:
        raise SystemExit("a page's Links is not shared: the generic Page in models/shared.py needs it there")
    shared = set(names[SHARED])
    texts = {}
    for area in sorted(names):
        written = [item if isinstance(item, str) else item.source() for item in folded(bodies.get(area, []))]
        body = "\n".join(["\n" + item for item in written] + pages.get(area, []))
        own = set() if area == SHARED else shared
        texts[f"models/{area}.py"] = "\n".join([HEADER, *imports(body, own), "", body])
    texts["models/__init__.py"] = package_source(names)
    return texts


def folded(items: list[str | Struct]) -> list[str | Struct]:
    """A module's structs with their repeated leading fields written once. A struct that starts with
    every field of an earlier one extends it (``TransactionBody`` is ``PreviewBody`` and a key);
    structs that start alike extend a base of what they share (``ProductCreate``, ``ProductPatch``
    and ``ProductReplace`` extend ``_ProductFields``). The fields keep their order on the wire."""
    structs = [item for item in items if isinstance(item, Struct)]
    for i, struct in enumerate(structs):
        starts = [e for e in structs[:i] if len(e.fields) >= FOLD_LINES and struct.fields[: len(e.fields)] == e.fields]
        if starts and struct.base == "msgspec.Struct":
            extended = max(starts, key=lambda e: len(e.fields))
            struct.base, struct.fields = extended.name, struct.fields[len(extended.fields) :]
    out = list(items)
    groups: dict[tuple[str, ...], list[Struct]] = {}
    for struct in structs:
        if struct.base == "msgspec.Struct" and len(struct.fields) >= FOLD_LINES:
            groups.setdefault(tuple(struct.fields[:FOLD_LINES]), []).append(struct)
    for group in (g for g in groups.values() if len(g) > 1):
        shared = len(group[0].fields)
        while any(s.fields[:shared] != group[0].fields[:shared] for s in group):
            shared -= 1
        names = " and ".join([", ".join(f"``{s.name}``" for s in group[:-1]), f"``{group[-1].name}``"])
        base = Struct(f"_{common_words([s.name for s in group])}Fields", f'"""The fields {names} start with."""', [])
        base.fields = group[0].fields[:shared]
        out.insert(out.index(group[0]), base)
        for struct in group:
            struct.base, struct.fields = base.name, struct.fields[shared:]
    return out


def common_words(names: list[str]) -> str:
    """The CamelCase words every name starts with (``Customer`` of ``CustomerCreate``,
    ``CustomerUpdate``), else the first name."""
    words = [re.findall(r"[A-Z][a-z0-9]*", name) for name in names]
    common = []
    for parts in zip(*words, strict=False):
        if len(set(parts)) > 1:
            break
        common.append(parts[0])
    return "".join(common) or names[0]


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
