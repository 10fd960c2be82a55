"""An independent Python model of the Firebase Realtime Database data model, for computing expectations.

Written from docs/protocol/data-model.md (ordering §7, queries §8, push ids §9) and wire-protocol.md §8.2 (hash).
Nodes are kept in *export format*, normalized:

* empty: ``None``
* leaf without priority: the scalar (``bool``, ``int``, ``float``, ``str``)
* leaf with priority: ``{".value": v, ".priority": p}``
* children node: ``{key: node, ...}`` plus ``".priority": p`` when it has one

Paths are lists of key strings (see :func:`segments`).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
import struct
import time
from typing import Any, Callable, Iterable

MIN_NAME = "[MIN_NAME]"
MAX_NAME = "[MAX_NAME]"
MAX_KEY = "[MAX_KEY]"  # Android's spelling of the max sentinel
_MIN_SENTINELS = {MIN_NAME}
_MAX_SENTINELS = {MAX_NAME, MAX_KEY}

PRIORITY = ".priority"
VALUE = ".value"


# ---------------------------------------------------------------------------------------------------------------
# Paths


def segments(path: str | list[str] | tuple[str, ...]) -> list[str]:
    """Splits a wire path on ``/`` and drops empty segments (data-model.md §2.3)."""
    if isinstance(path, (list, tuple)):
        return list(path)
    return [part for part in path.split("/") if part]


def path_string(path: str | list[str]) -> str:
    """The canonical form: ``/`` for the root, else ``/a/b``."""
    parts = segments(path)
    return "/" + "/".join(parts)


def is_prefix(prefix: list[str], path: list[str]) -> bool:
    return len(prefix) <= len(path) and path[: len(prefix)] == prefix


# ---------------------------------------------------------------------------------------------------------------
# Node helpers


def is_leaf(node: Any) -> bool:
    return node is not None and (not isinstance(node, dict) or VALUE in node)


def leaf_value(node: Any) -> Any:
    """The scalar of a leaf (priority stripped)."""
    return node[VALUE] if isinstance(node, dict) else node


def priority_of(node: Any) -> Any:
    return node.get(PRIORITY) if isinstance(node, dict) else None


def children_of(node: Any) -> dict[str, Any]:
    """The children of a children node (empty dict for leaves and empty)."""
    if not isinstance(node, dict) or VALUE in node:
        return {}
    return {key: child for key, child in node.items() if key != PRIORITY}


def with_priority(node: Any, priority: Any) -> Any:
    """``node`` with its priority replaced (``None`` removes it); empty nodes never carry one."""
    if node is None:
        return None
    if is_leaf(node):
        value = leaf_value(node)
        return value if priority is None else {VALUE: value, PRIORITY: priority}
    result = children_of(node)
    if priority is not None:
        result[PRIORITY] = priority
    return result


def normalize(data: Any) -> Any:
    """Turns written JSON (arrays, ``.value`` wrappers, nulls, empty objects, ``-0``) into a normalized node."""
    if data is None:
        return None
    if isinstance(data, list):
        data = {str(index): item for index, item in enumerate(data) if item is not None}
    if isinstance(data, dict):
        priority = data.get(PRIORITY)
        if VALUE in data:
            value = data[VALUE]
            if value is None:
                return None
            return with_priority(_scalar(value), priority)
        result = {}
        for key, child in data.items():
            if key == PRIORITY:
                continue
            normalized = normalize(child)
            if normalized is not None:
                result[key] = normalized
        if not result:
            return None
        if priority is not None:
            result[PRIORITY] = priority
        return result
    return _scalar(data)


def _scalar(value: Any) -> Any:
    if isinstance(value, float) and value == 0:
        return 0  # -0 is normalized to 0 (data-model.md §3.2)
    return value


def get(node: Any, path: str | list[str]) -> Any:
    """The node at ``path`` below ``node`` (a trailing ``.priority`` segment yields the priority)."""
    for key in segments(path):
        if key == PRIORITY:
            return priority_of(node)
        node = children_of(node).get(key)
        if node is None:
            return None
    return node


def set_at(node: Any, path: str | list[str], value: Any) -> Any:
    """A copy of ``node`` with ``value`` (export JSON, normalized here) written at ``path`` (a set, §1)."""
    parts = segments(path)
    value = normalize(value) if not (parts and parts[-1] == PRIORITY) else value
    return _set(node, parts, value)


def _set(node: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    head, rest = parts[0], parts[1:]
    if head == PRIORITY:
        return with_priority(node, value)
    if is_leaf(node) and value is None:
        return node  # deleting below a leaf changes nothing (LeafNode.updateImmediateChild)
    priority = priority_of(node)
    children = children_of(node)
    child = _set(children.get(head), rest, value)
    if child is None:
        children.pop(head, None)
    else:
        children[head] = child
    if not children:
        return None  # an object whose last child was deleted is empty, and so loses its priority
    if priority is not None:
        children[PRIORITY] = priority  # writing below a leaf keeps the leaf's priority on the new object
    return children


def update_at(node: Any, path: str | list[str], changes: dict[str, Any]) -> Any:
    """A copy of ``node`` with every relative path of ``changes`` set under ``path`` (a merge, §1)."""
    base = segments(path)
    for relative, value in changes.items():
        node = set_at(node, base + segments(relative), value)
    return node


def to_plain(node: Any) -> Any:
    """The node without priorities (what ``DataSnapshot.val()`` shows, objects kept as objects)."""
    if node is None:
        return None
    if is_leaf(node):
        return leaf_value(node)
    return {key: to_plain(child) for key, child in children_of(node).items()}


def nodes_equal(a: Any, b: Any) -> bool:
    """Equality of normalized nodes, numbers compared by value (5 == 5.0), booleans never equal to numbers."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(nodes_equal(a[key], b[key]) for key in a)
    return type(a) is type(b) and a == b


# ---------------------------------------------------------------------------------------------------------------
# Ordering (data-model.md §7)

_INT_KEY = re.compile(r"^-?(0*)\d{1,10}$")


def int_key(key: str) -> int | None:
    """The 32-bit integer a key parses as under the JS rule (§7.1), else None."""
    if not _INT_KEY.match(key):
        return None
    value = int(key)
    return value if -(2**31) <= value <= 2**31 - 1 else None


def utf16(text: str) -> bytes:
    """UTF-16 code units, big-endian, so that byte order is code-unit order."""
    return text.encode("utf-16-be", "surrogatepass")


def utf16_length(text: str) -> int:
    return len(utf16(text)) // 2


def compare_strings(a: str, b: str) -> int:
    ua, ub = utf16(a), utf16(b)
    return (ua > ub) - (ua < ub)


def compare_keys(a: str, b: str) -> int:
    """Key order: sentinels at the ends, int-like keys numerically (ties: shorter first), then strings."""
    if a == b:
        return 0
    if a in _MIN_SENTINELS or b in _MAX_SENTINELS:
        return -1
    if b in _MIN_SENTINELS or a in _MAX_SENTINELS:
        return 1
    ia, ib = int_key(a), int_key(b)
    if ia is not None and ib is not None:
        if ia != ib:
            return -1 if ia < ib else 1
        return (len(a) > len(b)) - (len(a) < len(b))
    if ia is not None:
        return -1
    if ib is not None:
        return 1
    return compare_strings(a, b)


def _value_rank(value: Any) -> int:
    if value is None:
        return 0
    if isinstance(value, bool):
        return 1
    if isinstance(value, (int, float)):
        return 2
    if isinstance(value, str):
        return 3
    return 4  # children node


def compare_values(a: Any, b: Any) -> int:
    """Value order (§7.2) of two nodes (priorities ignored); objects compare equal to each other."""
    va = leaf_value(a) if is_leaf(a) else (None if a is None else a)
    vb = leaf_value(b) if is_leaf(b) else (None if b is None else b)
    ra, rb = _value_rank(va), _value_rank(vb)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 1 or ra == 2:
        return (va > vb) - (va < vb)
    if ra == 3:
        return compare_strings(va, vb)
    return 0


def _priority_rank(priority: Any) -> int:
    if priority is None:
        return 0
    if isinstance(priority, (int, float)) and not isinstance(priority, bool):
        return 1
    return 2


def compare_priorities(a: Any, b: Any) -> int:
    ra, rb = _priority_rank(a), _priority_rank(b)
    if ra != rb:
        return -1 if ra < rb else 1
    if ra == 1:
        return (a > b) - (a < b)
    if ra == 2:
        return compare_strings(a, b)
    return 0


class Index:
    """One of the four indexes: ``.key``, ``.value``, ``.priority`` (the default) or a child path."""

    def __init__(self, spec: str | None):
        self.spec = spec or ".priority"
        self.kind = self.spec if self.spec in (".key", ".value", ".priority") else "child"
        self.child_path = segments(self.spec) if self.kind == "child" else []

    def sort_value(self, node: Any) -> Any:
        """The value a child is ordered by (for the key index: nothing, the key decides)."""
        if self.kind == ".value":
            return node
        if self.kind == ".priority":
            return priority_of(node)
        if self.kind == "child":
            found = get(node, self.child_path)
            return found
        return None

    def compare_sort_values(self, a: Any, b: Any) -> int:
        if self.kind == ".priority":
            return compare_priorities(a, b)
        if self.kind == ".key":
            return 0
        return compare_values(a, b)

    def compare(self, a: tuple[str, Any], b: tuple[str, Any]) -> int:
        """Compares two (key, node) children."""
        result = self.compare_sort_values(self.sort_value(a[1]), self.sort_value(b[1]))
        return result if result else compare_keys(a[0], b[0])

    def indexed_value_changed(self, old: Any, new: Any) -> bool:
        if self.kind == ".key":
            return False
        return self.compare_sort_values(self.sort_value(old), self.sort_value(new)) != 0

    def sorted(self, children: dict[str, Any]) -> list[tuple[str, Any]]:
        return sorted(children.items(), key=functools.cmp_to_key(self.compare))


# ---------------------------------------------------------------------------------------------------------------
# Queries (data-model.md §8)


def query_index(query: dict | None) -> Index:
    return Index((query or {}).get("i"))


def _position_compare(index: Index, bound_value: Any, bound_name: str, key: str, node: Any) -> int:
    """Compares a bound position (value, name) with the position of child (key, node)."""
    if index.kind == ".key":
        return compare_keys(bound_value, key)
    if index.kind == ".priority":
        result = compare_priorities(bound_value, priority_of(node))
    else:
        result = compare_values(bound_value, index.sort_value(node))
    return result if result else compare_keys(bound_name, key)


def evaluate_query(node: Any, query: dict | None) -> Any:
    """The window a (tagged) query on ``node`` selects, in export format (root priority dropped), or None."""
    query = query or {}
    index = query_index(query)
    selected = []
    for key, child in children_of(node).items():
        if "sp" in query:
            order = _position_compare(index, query["sp"], query.get("sn", MIN_NAME), key, child)
            if order > 0 or (order == 0 and query.get("sin", True) is False):
                continue
        if "ep" in query:
            order = _position_compare(index, query["ep"], query.get("en", MAX_NAME), key, child)
            if order < 0 or (order == 0 and query.get("ein", True) is False):
                continue
        selected.append((key, child))
    selected.sort(key=functools.cmp_to_key(index.compare))
    if "l" in query:
        limit = query["l"]
        selected = selected[:limit] if query.get("vf", "l") == "l" else selected[max(0, len(selected) - limit):]
    return dict(selected) or None


def ordered_keys(window: Any, query: dict | None) -> list[str]:
    return [key for key, _ in query_index(query).sorted(children_of(window))]


# ---------------------------------------------------------------------------------------------------------------
# Child events (wire-protocol.md §12: removed, added, moved, changed, then value)


def child_events(old: Any, new: Any, query: dict | None = None) -> list[tuple[str, str]]:
    """The events an SDK raises for a view changing from ``old`` to ``new`` (``("value", "")`` last if changed)."""
    index = query_index(query)
    old_children, new_children = children_of(old), children_of(new)
    removed = [(k, old_children[k]) for k in old_children if k not in new_children]
    added = [(k, new_children[k]) for k in new_children if k not in old_children]
    changed = [
        (k, new_children[k])
        for k in new_children
        if k in old_children and not nodes_equal(old_children[k], new_children[k])
    ]
    moved = [(k, node) for k, node in changed if index.indexed_value_changed(old_children[k], node)]

    def order(items: list[tuple[str, Any]]) -> list[str]:
        return [key for key, _ in sorted(items, key=functools.cmp_to_key(index.compare))]

    events = [("child_removed", k) for k in order(removed)]
    events += [("child_added", k) for k in order(added)]
    events += [("child_moved", k) for k in order(moved)]
    events += [("child_changed", k) for k in order(changed)]
    if not nodes_equal(old, new):
        events.append(("value", ""))
    return events


# ---------------------------------------------------------------------------------------------------------------
# Hash (wire-protocol.md §8.2)


def _number_hex(value: float | int) -> str:
    return struct.pack(">d", float(value)).hex()


def _priority_text(priority: Any) -> str:
    if isinstance(priority, (int, float)) and not isinstance(priority, bool):
        return "number:" + _number_hex(priority)
    return "string:" + priority


def _leaf_text(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean:" + ("true" if value else "false")
    if isinstance(value, (int, float)):
        return "number:" + _number_hex(value)
    return "string:" + value


def node_hash(node: Any) -> str:
    """The version-1 simple hash of a node given as export JSON (normalized first); ``""`` for empty."""
    return _hash(normalize(node))


def _hash(node: Any) -> str:
    if node is None:
        return ""
    text = ""
    priority = priority_of(node)
    if priority is not None:
        text = "priority:" + _priority_text(priority) + ":"
    if is_leaf(node):
        text += _leaf_text(leaf_value(node))
    else:
        for key, child in Index(".priority").sorted(children_of(node)):
            child_hash = _hash(child)
            if child_hash:
                text += ":" + key + ":" + child_hash
    if not text:
        return ""
    return base64.b64encode(hashlib.sha1(text.encode("utf-8", "surrogatepass")).digest()).decode("ascii")


# ---------------------------------------------------------------------------------------------------------------
# Push ids (data-model.md §9)

PUSH_CHARS = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"


class PushIdGenerator:
    """Generates push ids like the SDKs: 8 timestamp characters and 12 random ones, incremented within one ms."""

    def __init__(self, clock: Callable[[], int] | None = None):
        self._clock = clock or (lambda: int(time.time() * 1000))
        self._last_time = -1
        self._last_random = [0] * 12

    def __call__(self) -> str:
        now = self._clock()
        if now == self._last_time:
            for position in range(11, -1, -1):
                if self._last_random[position] != 63:
                    self._last_random[position] += 1
                    break
                self._last_random[position] = 0
        else:
            self._last_random = list(os.urandom(12))
            self._last_random = [byte % 64 for byte in self._last_random]
        self._last_time = now
        prefix = []
        value = now
        for _ in range(8):
            prefix.append(PUSH_CHARS[value % 64])
            value //= 64
        return "".join(reversed(prefix)) + "".join(PUSH_CHARS[digit] for digit in self._last_random)


def push_id_time(push_id: str) -> int:
    """The millisecond timestamp encoded in a push id's first 8 characters."""
    value = 0
    for char in push_id[:8]:
        value = value * 64 + PUSH_CHARS.index(char)
    return value


def dumps(value: Any) -> str:
    """Compact JSON as the SDKs write it (non-ASCII characters kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def iter_paths(node: Any, base: list[str] | None = None) -> Iterable[list[str]]:
    """Every leaf path of a node."""
    base = base or []
    if node is None:
        return
    if is_leaf(node):
        yield base
        return
    for key, child in children_of(node).items():
        yield from iter_paths(child, base + [key])
