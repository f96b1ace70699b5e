"""The source of the ``loyalty_client.operations`` package (per area, each operation as data and the
function that makes its request from a method's arguments) and of the two clients' methods, made
from those functions by ``loyalty_client.methods``: each operation's signature, docstring and
request are written once, the blocking and the awaitable client only name them."""

from __future__ import annotations

import re

from loyalty_client_gen.generate import HEADER, Operation, Param


def constant(op: Operation) -> str:
    return op.name.upper()


def iterator_name(op: Operation) -> str:
    return "iter_" + op.name.removeprefix("list_")


def qualified(kind: str) -> str:
    """A type of the document as the operations modules write it: models as ``models.X``."""

    def qualify(match: re.Match[str]) -> str:
        word = match.group(0)
        return word if word.startswith('"') or word in ("Any", "Literal", "None") else f"models.{word}"

    return re.sub(r'"[^"]*"|\b[A-Z]\w*', qualify, kind)


def query_param(q: Param) -> str:
    kind = qualified(q.kind)
    if q.required:
        return f"{q.name}: {kind}"
    return f"{q.name}: {kind} = None" if kind.endswith("| None") else f"{q.name}: {kind} | None = None"


def parameters(op: Operation) -> list[str]:
    params = [f"{p.name}: {p.kind}" for p in op.path_params]
    if op.body is not None:
        body = qualified(op.body)
        params.append(f"body: {body} | None = None" if op.body_optional else f"body: {body}")
    if op.query:
        params.append("*")
        params.extend(query_param(q) for q in sorted(op.query, key=lambda q: not q.required))
    return params


def answer(op: Operation) -> str:
    result = qualified(op.result)
    return f"bytes | {result}" if op.binary else result


def operation_data(op: Operation) -> str:
    """The ``Operation``, naming only what differs from its defaults (auth, envelope)."""
    flags = [
        f"{name}={value}"
        for name, value, default in (
            ("auth", op.auth, True),
            ("idempotent", op.idempotent, False),
            ("envelope", op.envelope, True),
            ("binary", op.binary, False),
        )
        if value != default
    ]
    args = [f'"{op.op_id}"', f'"{op.method}"', f'"{op.path}"', qualified(op.result), *flags]
    return f"{constant(op)} = Operation({', '.join(args)})"


def request_function(op: Operation) -> list[str]:
    path = "{" + ", ".join(f'"{p.name}": {p.name}' for p in op.path_params) + "}"
    query = "{" + ", ".join(f'"{q.name}": {q.name}' for q in op.query) + "}"
    if op.body is None:
        body = ""
    elif op.body_optional:
        body = f", body if body is not None else {qualified(op.body)}()"
    else:
        body = ", body"
    return [
        f"def {op.name}({', '.join(parameters(op))}) -> Call[{answer(op)}]:",
        f'    """{op.method} {op.path} ({op.op_id})."""',
        f"    return Call({constant(op)}, {path}, {query}{body})",
    ]


def area_source(ops: list[Operation]) -> str:
    text = "\n".join(f"\n{operation_data(op)}\n\n\n" + "\n".join(request_function(op)) for op in ops)
    head = [HEADER, "from __future__ import annotations\n"]
    typing = [name for name in ("Any", "Literal") if re.search(rf"\b{name}\b", text)]
    if typing:
        head.append(f"from typing import {', '.join(typing)}\n")
    if "models." in text:
        head.append("from loyalty_client import models")
    head.append("from loyalty_client.operation import Call, Operation\n")
    return "\n".join(head) + text + "\n"


def operations_sources(ops: list[Operation]) -> dict[str, str]:
    """``operations/<area>.py`` per area, and ``operations/__init__.py`` with ``OPERATIONS``."""
    areas = sorted({op.area for op in ops})
    texts = {f"operations/{area}.py": area_source([op for op in ops if op.area == area]) for area in areas}
    texts["operations/__init__.py"] = (
        "\n".join(
            [
                HEADER,
                "from __future__ import annotations\n",
                "from loyalty_client.operation import Operation",
                f"from loyalty_client.operations import {', '.join(areas)}\n",
                "OPERATIONS: tuple[Operation, ...] = (",
                *(f"    {op.area}.{constant(op)}," for op in ops),
                ")",
            ]
        )
        + "\n"
    )
    return texts


def clients_source(ops: list[Operation], *, is_async: bool) -> str:
    """``blocking.py`` or ``awaitable.py``: one line per method."""
    make = "awaitable" if is_async else "blocking"
    out = [
        HEADER,
        "from __future__ import annotations\n",
        "from loyalty_client import operations",
        f"from loyalty_client.methods import {make}, {make}_pages\n\n",
        f"class {'AsyncOperations' if is_async else 'Operations'}:",
        f'    """One method per operation of the public API (the {make} client\'s), made from the function',
        '    of the same name in ``loyalty_client.operations``: its parameters, docstring and request."""\n',
    ]
    for op in ops:
        function = f"operations.{op.area}.{op.name}"
        out.append(f"    {op.name} = {make}({function})")
        if op.item is not None:
            out.append(f"    {iterator_name(op)} = {make}_pages({function})")
    return "\n".join(out) + "\n"
