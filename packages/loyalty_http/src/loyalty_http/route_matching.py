"""Route matching that tries every route a path can match (INPUT-12: 404 versus 405).

Litestar's router walks its route tree greedily: at each segment a literal child wins over a path
parameter and it never comes back. A literal segment that belongs to one route therefore hides
every route with a parameter in that place: ``/customers/by-external-id/wallet/adjust`` is the
wallet-adjust route of customer ``by-external-id``, yet the router answers 404 ROUTE_NOT_FOUND for
every verb, where INPUT-12 wants 405 METHOD_NOT_ALLOWED for a path that exists under another verb,
and the route's own answer for its verb.

When the router refuses a path (404 or 405), every route whose template matches it is considered,
literal segments before parameters: the first that takes the verb serves the request; if none
does, 405 names every verb the path takes; only a path no route matches stays 404. A path the
router serves is never looked at again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any

from litestar import Litestar
from litestar._asgi.routing_trie.traversal import parse_node_handlers, parse_path_params
from litestar._asgi.routing_trie.types import PathParameterSentinel, RouteTrieNode
from litestar.exceptions import MethodNotAllowedException, NotFoundException
from litestar.utils import normalize_path

Match = tuple[RouteTrieNode, list[str]]


def matching_routes(node: RouteTrieNode, components: list[str], values: tuple[str, ...] = ()) -> Iterator[Match]:
    """Every route whose template matches ``components``, literal segments tried before parameters."""
    if not components:
        if node.asgi_handlers:
            yield node, list(values)
        return
    head, rest = components[0], components[1:]
    if head in node.child_keys:
        yield from matching_routes(node.children[head], rest, values)
    if node.is_path_param_node:
        child = node.children[PathParameterSentinel]
        if child.is_path_type:
            yield child, [*values, normalize_path("/".join(components))]
        else:
            yield from matching_routes(child, rest, (*values, head))


def backtracking(app: Litestar) -> None:
    """Make ``app`` look at every matching route when its router refuses a path. Runs at every
    start of the app; an app started again (each test client starts it) keeps its one matcher,
    where wrapping it anew each time would nest until the recursion limit."""
    router = app.asgi_router
    if getattr(router.handle_routing, "backtracks", False):
        return
    greedy: Callable[..., Any] = router.handle_routing
    root = router.root_route_map_node

    @lru_cache(1024)
    def handle_routing(path: str, method: Any) -> Any:
        try:
            return greedy(path=path, method=method)
        except (NotFoundException, MethodNotAllowedException) as refused:
            matches = list(matching_routes(root, [p for p in path.split("/") if p]))
            taking = [(node, values) for node, values in matches if method in node.asgi_handlers]
            if not taking:
                if not matches or (isinstance(refused, MethodNotAllowedException) and len(matches) == 1):
                    raise
                verbs = dict.fromkeys(verb for node, _ in matches for verb in node.asgi_handlers)
                raise MethodNotAllowedException(headers={"allow": ", ".join(map(str, verbs))}) from refused
        node, values = taking[0]
        asgi_app, handler = parse_node_handlers(node=node, method=method)
        try:
            params = parse_path_params(node.path_parameters[method], tuple(values))
        except ValueError as e:
            raise NotFoundException() from e
        return asgi_app, handler, path, params, node.path_template

    handle_routing.backtracks = True  # type: ignore[attr-defined]
    router.handle_routing = handle_routing
