"""From the document's JSON schemas to Python type expressions and msgspec struct source."""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

REF = "#/components/schemas/"
TRUTHY = frozenset({"0", "1", "false", "true"})
"""A query enum of exactly these values is a yes/no switch: the client takes a ``bool``."""


def ref_name(ref: str) -> str:
    return ref.removeprefix(REF)


def class_name(schema_name: str) -> str:
    """``Page_Product_`` is ``ProductPage``; other names are already Python names."""
    match = re.fullmatch(r"Page_(\w+?)_", schema_name)
    if match:
        return f"{match.group(1)}Page"
    return schema_name


def snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def literal(values: list[Any]) -> str:
    return "Literal[" + ", ".join(json.dumps(v) for v in values) + "]"


@dataclass
class Types:
    """Turns schemas into type expressions, recording which named schemas are used."""

    schemas: Mapping[str, Any]
    used: set[str] = field(default_factory=set)

    def of(self, schema: Mapping[str, Any]) -> str:
        if "$ref" in schema:
            name = ref_name(schema["$ref"])
            self.used.add(name)
            return class_name(name)
        if "anyOf" in schema or "oneOf" in schema:
            parts = [self.of(s) for s in schema.get("anyOf", schema.get("oneOf"))]
            unique = list(dict.fromkeys(parts))
            return " | ".join(p for p in unique if p != "None") + (" | None" if "None" in unique else "")
        if "enum" in schema:
            return literal(schema["enum"])
        if "const" in schema:
            return literal([schema["const"]])
        kind = schema.get("type")
        if kind == "null":
            return "None"
        if kind == "string":
            if schema.get("format") == "date":
                return "datetime.date"
            if schema.get("format") == "binary":
                return "bytes"
            return "str"
        if kind == "integer":
            return "int"
        if kind == "number":
            return "float"
        if kind == "boolean":
            return "bool"
        if kind == "array":
            return f"list[{self.of(schema.get('items', {}))}]"
        if kind == "object" and "properties" not in schema:
            extra = schema.get("additionalProperties")
            value = self.of(extra) if isinstance(extra, dict) and extra else "Any"
            return f"dict[str, {value}]"
        return "Any"

    def query(self, schema: Mapping[str, Any]) -> str:
        if set(schema.get("enum", ())) == TRUTHY:
            return "bool"
        return self.of(schema)

    def closure(self, names: set[str]) -> list[str]:
        """Every schema ``names`` reach, in document order."""
        seen: set[str] = set()
        todo = list(names)
        while todo:
            name = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            todo.extend(ref_name(r) for r in refs(self.schemas[name]))
        return [n for n in self.schemas if n in seen]


def refs(schema: Any) -> Iterator[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref":
                yield value
            else:
                yield from refs(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from refs(value)


PAGE_SOURCE = '''
ItemT = TypeVar("ItemT")


class Page(msgspec.Struct, Generic[ItemT], kw_only=True):
    """One page of a list: its items, the links to the other pages and where it stands."""

    data: list[ItemT]
    links: Links
    meta: Meta
'''
"""Every ``Page_X_`` schema of the document is this struct of its item (``page_item``)."""


def page_item(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The item schema of a page of the shape ``Page`` has, else None."""
    properties = schema.get("properties", {})
    shaped = schema.get("title", "").startswith("Page[") and properties.keys() == {"data", "links", "meta"}
    if shaped and (properties["links"], properties["meta"]) == ({"$ref": REF + "Links"}, {"$ref": REF + "Meta"}):
        item: Mapping[str, Any] = properties["data"]["items"]
        return item
    return None


@dataclass
class Struct:
    """A msgspec struct to write: its docstring literal and field lines, and the struct it extends."""

    name: str
    doc: str
    fields: list[str]
    base: str = "msgspec.Struct"

    def source(self) -> str:
        lines = [f"class {self.name}({self.base}, kw_only=True):"]
        if self.doc:
            lines.extend([f"    {self.doc}", ""])
        lines.extend(f"    {field}" for field in self.fields)
        if not self.fields and not self.doc:
            lines.append("    pass")
        return "\n".join(lines) + "\n"


def enum_source(name: str, schema: Mapping[str, Any]) -> str:
    return f"{class_name(name)} = {literal(schema['enum'])}\n"


def struct_of(name: str, schema: Mapping[str, Any], types: Types, *, request: bool) -> Struct:
    """One msgspec struct. A request's optional fields default to UNSET, so what the caller leaves
    out is left out of the body (on PATCH, ``None`` clears a field); an ``idempotency_key`` is
    optional because the client makes one when the caller gives none. A camelCase wire name is a
    snake_case attribute that keeps its wire name (``attribute_of``)."""
    doc = " ".join(str(schema.get("description", "")).split())
    required = set(schema.get("required", ()))
    fields = []
    properties: Mapping[str, Any] = schema.get("properties", {})
    attributes = {prop: attribute_of(name, prop) for prop in properties}
    if len(set(attributes.values())) < len(attributes):
        raise ValueError(f"{name}: two wire names make one attribute: {sorted(attributes)}")
    for prop, sub in properties.items():
        attribute, kind = attributes[prop], types.of(sub)
        if request and (prop == "idempotency_key" or prop not in required):
            kind, default = unset_or(kind), "msgspec.UNSET"
        elif prop in required:
            default = None
        else:
            value = sub.get("default")
            if value is None and not kind.endswith("| None"):
                kind += " | None"
            default = None if isinstance(value, (dict, list)) else repr(value)
        fields.append(field_line(attribute, kind, default, None if attribute == prop else prop))
    return Struct(class_name(name), doc_literal(doc) if doc else "", fields)


def attribute_of(struct: str, prop: str) -> str:
    """The attribute of a wire name: the name itself, or its snake_case (``marketingConsent`` is
    ``marketing_consent``), so every attribute reads like the rest of the client."""
    attribute = snake(prop)
    if keyword.iskeyword(attribute) or not attribute.isidentifier():
        raise ValueError(f"{struct}.{prop} is no Python name: give the struct field a wire name")
    return attribute


def field_line(attribute: str, kind: str, default: str | None, wire: str | None) -> str:
    """``attribute: kind``, with its default, and ``msgspec.field(name=...)`` where the wire name
    differs: msgspec reads and writes the wire name, so the JSON is the document's both ways."""
    if wire is None:
        return f"{attribute}: {kind}" if default is None else f"{attribute}: {kind} = {default}"
    given = f"default={default}, " if default is not None else ""
    return f'{attribute}: {kind} = msgspec.field({given}name="{wire}")'


def unset_or(kind: str) -> str:
    """``X | msgspec.UnsetType``, keeping ``None`` last."""
    if kind.endswith(" | None"):
        return kind.removesuffix(" | None") + " | msgspec.UnsetType | None"
    return kind + " | msgspec.UnsetType"


def doc_literal(text: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if len(text) + 10 <= 116:
        return f'"""{text}"""'
    words, out, line = text.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > 100:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    out.append(line)
    return '"""' + "\n    ".join(out) + '"""'
