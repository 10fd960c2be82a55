"""The Python reference model against the spec's own vectors (wire-protocol.md §8.3, data-model.md §7.1, §9).

The gateway tests trust this model for their expectations, so it is checked against the published values first.
"""

import functools

import pytest

import firebase_model as model
from firebase_wire import split_for_wire

HASH_VECTORS = [
    (5, "w28swksk9+tXf5jEdS9R5oSFAv8="),
    (6, "qb1N9GrUXfC3JyZPF8EXiNYcv4I="),
    (True, "E5z61QM0lN/U2WsOnusszCTkR8M="),
    (False, "aSSNoqcS4oQwJ2xxH20rvpp3zP0="),
    (500, "Ajg9bohDwTVmqR14o1bVJnneryM="),
    ("Hello World", "B8HWXc7zXMjrsnJxPRj7wrNGqt4="),
    ({"foo": "bar"}, "XnLeTeWQmzTHImTbSMDLg/qMrKY="),
    ("alice", "64vMI8MCN8AT9pH+B5QFMCxq8Tg="),
    (10, "+r5aI9HvKKagELki8SYKBk0q7D4="),
    ({"name": "alice", "score": 10}, "VXyngTbGPVLJVIlCuwPFLFZsoDY="),
    ({"10": "c", "2": "b", "a": "x"}, "ve4o4odjQgqhJDIXFEMHwyItQOI="),
    ({".value": "hi", ".priority": 1}, "Xe7+tbnM6t2/19hT9pko7UKpR4c="),
    (4, "eVih19a6ZDz3NL32uVBtg9KSgQY="),
    (4.5623, "vf1CL0tIRwXXunHcG/irRECk3lY="),
    ("hey guys", "CUNLXWpCVoJE6z7z1vE57lGaKAU="),
    ({"intNode": 4, "doubleNode": 4.5623, "stringNode": "hey guys", "boolNode": True}, "6Mc4jFmNdrLVIlJJjz2/MakTK9I="),
    ({"root": {"c": {".value": 99, ".priority": "abc"}, ".priority": "def"}}, "Fm6tzN4CVEu5WxFDZUdTtqbTVaA="),
    ({"root": {"c": {".value": 99, ".priority": 42}, ".priority": 3.14}}, "B15QCqrzCxrI5zz1y00arWqFRFg="),
    (0, "7ysMph9WPitGP7poMnMHMVPtUlI="),
    (None, ""),
    ({}, ""),
    ({
        "a": -1.7976931348623157e308, "b": 1.7976931348623157e308, "c": "unicode \u2714 \U0001F435 \U0001F334 x\u0362",
        "d": 3.1415926535897932384626433832795, "e": {".value": 12345678901234568, ".priority": "\U0001F435"},
        "\u2714": "foo", ".priority": "\u2714",
    }, "CyC0OU8GSkOAKnsPjheWtWC0Yxo="),
]


@pytest.mark.parametrize("node,expected", HASH_VECTORS)
def test_hash_matches_the_spec_vectors(node, expected):
    assert model.node_hash(node) == expected


def test_negative_zero_hashes_differently_before_normalization():
    # §8.4: -0 must be normalized to 0 before hashing; unnormalized it would be m/gA365Q5OBo06Bg8wdybAAiMSQ=.
    assert model._hash(-0.0) == "m/gA365Q5OBo06Bg8wdybAAiMSQ="
    assert model.node_hash(-0.0) == model.node_hash(0)


def test_key_order_follows_the_js_rule():
    keys = ["b", "10", "a", "2", "-1", "007", "7", "2147483648", "-2147483648", "0", "-0", "A", "_x", "-abc"]
    ordered = sorted(keys, key=functools.cmp_to_key(model.compare_keys))
    assert ordered == ["-2147483648", "-1", "0", "-0", "2", "7", "007", "10", "-abc", "2147483648", "A", "_x",
                       "a", "b"]


def test_strings_compare_by_utf16_code_units():
    assert model.compare_strings("\uffff", "\U0001F600") > 0
    assert model.compare_keys("\U0001F600", "\uffff") < 0


def test_push_ids_decode_to_their_time_and_increase_within_one_millisecond():
    assert model.push_id_time("-JSOpn9ZC54A4P4RoqVa") == 1405961581220
    generator = model.PushIdGenerator(lambda: 1718049600000)
    ids = [generator() for _ in range(100)]
    assert all(i.startswith("-O-2j67-") and len(i) == 20 for i in ids)
    assert ids == sorted(ids) and len(set(ids)) == 100


SCORES = {"alice": {"points": 40}, "bob": {"points": 75}, "carol": {"points": 75}, "dave": {"points": 120}}


@pytest.mark.parametrize("query,keys", [
    ({"sp": 50, "sin": True, "ep": 100, "ein": True, "i": "points"}, ["bob", "carol"]),
    ({"sp": 75, "sn": "bob", "sin": False, "i": "points"}, ["carol", "dave"]),
    ({"sp": 75, "sn": "bob ", "i": "points"}, ["carol", "dave"]),
    ({"sp": 75, "sn": "[MAX_KEY]", "i": "points"}, ["dave"]),
    ({"sp": 75, "sn": "[MAX_NAME]", "sin": False, "i": "points"}, ["dave"]),
    ({"ep": 75, "en": "[MIN_NAME]", "ein": False, "i": "points"}, ["alice"]),
    ({"l": 1, "vf": "r", "i": "points"}, ["dave"]),
    ({"sp": 75, "ep": 75, "i": "points"}, ["bob", "carol"]),
    ({"sp": 75, "sn": "carol", "ep": 75, "en": "carol", "i": "points"}, ["carol"]),
    ({"sp": "b", "sin": False, "i": ".key"}, ["bob", "carol", "dave"]),
    ({"l": 2, "vf": "l"}, ["alice", "bob"]),
])
def test_queries_select_the_spec_examples(query, keys):
    assert model.ordered_keys(model.evaluate_query(SCORES, query), query) == keys


def test_events_come_removed_added_moved_changed_value():
    old = {"a": {"s": 1}, "b": {"s": 2}, "c": {"s": 3}}
    new = {"b": {"s": 9}, "c": {"s": 3, "x": 1}, "d": {"s": 0}}
    assert model.child_events(old, new, {"i": "s"}) == [
        ("child_removed", "a"), ("child_added", "d"), ("child_moved", "b"),
        ("child_changed", "c"), ("child_changed", "b"), ("value", "")]


def test_set_and_priority_paths():
    node = model.set_at(None, "/a/b", 1)
    node = model.set_at(node, "/a/.priority", 5)
    assert node == {"a": {"b": 1, ".priority": 5}}
    node = model.set_at(node, "/a/b/.priority", "x")
    assert node == {"a": {"b": {".value": 1, ".priority": "x"}, ".priority": 5}}
    assert model.set_at(node, "/a/b", None) is None
    assert model.set_at({"a": 5}, "/a/b/c", None) == {"a": 5}, "deleting below a leaf leaves it alone"
    assert model.set_at({"a": {".value": 5, ".priority": 1}}, "/a/b", 2) == {"a": {"b": 2, ".priority": 1}}


def test_split_for_wire_counts_utf16_units_and_never_cuts_a_pair():
    text = "\U0001F600" * 10000  # 20000 UTF-16 units
    frames = split_for_wire(text)
    assert frames[0] == "2"
    assert "".join(frames[1:]) == text
    assert all(model.utf16_length(piece) <= 16384 for piece in frames[1:])
    assert split_for_wire("x" * 16384) == ["x" * 16384]
    assert split_for_wire("x" * 16385) == ["2", "x" * 16384, "x"]
