"""The REST API over raw HTTP/1.1 (issue 6, acceptance 2): every method, query parameter and error path of
docs/protocol/rest-api.md as fixed by the REST contract — exact status, exact ``{"error": ...}`` text and the
pretty error body production sends — plus ETags, print modes, shallow, priorities, method override, CORS,
namespaces, the admin endpoints, keep-alive, pipelining and robustness against garbage.

No HTTP library stands between the test and the server (see rest_client.py), so what is asserted is what is on the
wire.
"""

from __future__ import annotations

import json
import socket
import time

import pytest

import firebase_model as model
import tokens
from conftest import ServerFactory
from rest_client import (ADMIN, JSON_CONTENT_TYPE, LARGE_NAMESPACE_LIMIT, RULES, ConnectionEnded, EnvironmentFor, HttpConnection, HttpResponse,
                         Rest, bounded, build_request, check_rest_headers, error_body, expect_error, expect_ok, pretty,
                         request, url)

SECRET = "canopy-rest-secret-0123456789abcdef"

BAD_JSON = "Invalid data; couldn't parse JSON object, array, or value."
BAD_PATCH = "Invalid data; couldn't parse JSON object. Are you sending a JSON object with valid key names?"
BAD_PATH = "Invalid path: Invalid token in path"
NOT_REST = "Invalid request: append .json to your request URI to use the REST API."
ORDER_BY_NOT_JSON = "orderBy must be a valid JSON encoded path"
ORDER_BY_MISSING = "orderBy must be defined when other query parameters are defined"
KEY_BOUND_NOT_STRING = "Provided key index type is invalid, must be string"
BOUND_NOT_PRIMITIVE = "Constraint index field must be a JSON primitive"
BOTH_LIMITS = "limitToFirst and limitToLast cannot both be set"
EQUAL_TO_WITH_RANGE = "equalTo cannot be combined with startAt or endAt"
SHALLOW_WITH_QUERY = "Mixing 'shallow' and querying parameters is not supported"
BAD_TOKEN = "Could not parse auth token."
EXPIRED_TOKEN = "Auth token is expired."
DENIED = "Permission denied"
IF_MATCH_NOT_SUPPORTED = "if-match is only supported for PUT and DELETE"
WRITE_TOO_BIG = ("WRITE_TOO_BIG: Data to write exceeds the maximum size that can be modified with a single "
                 "request.")



@pytest.fixture(scope="module")
def server():
    """The plain (open, no rules file) server of this module, with room for one namespace per test."""
    factory = ServerFactory()
    with EnvironmentFor(**LARGE_NAMESPACE_LIMIT):
        started = factory()
    yield started
    factory.finish()


@pytest.fixture(scope="module")
def rules_server(tmp_path_factory):
    path = tmp_path_factory.mktemp("rest-rules") / "database.rules.json"
    path.write_text(json.dumps(RULES))
    factory = ServerFactory()
    with EnvironmentFor(**LARGE_NAMESPACE_LIMIT):
        started = factory("--rules", str(path), "--auth-secret", SECRET)
    yield started
    factory.finish()


@pytest.fixture(autouse=True)
def _rules_server_survives(request):
    yield
    if "rules_server" in request.fixturenames:
        shared = request.getfixturevalue("rules_server")
        if not shared.alive():
            pytest.fail(f"the rules server died during this test: {shared.log_tail()}")


@pytest.fixture
def rest(server, ns):
    client = Rest(server.port, ns)
    yield client
    client.close()


@pytest.fixture
def secured(rules_server, ns):
    client = Rest(rules_server.port, ns)
    yield client
    client.close()


def token(uid: str, **kw) -> str:
    return tokens.hs256(SECRET, tokens.claims(uid, **kw))


def bearer(value: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {value}"}


# ---------------------------------------------------------------------------------------------------------------
# Methods


@bounded(20)
def test_get_of_an_empty_location_is_null_with_the_rest_headers(rest):
    response = expect_ok(rest.get("/nothing/here"), None)
    assert response.body.strip() == b"null"
    expect_ok(rest.get("/"), None)


@bounded(20)
def test_put_answers_the_stored_value_and_get_reads_it_back(rest):
    value = {"a": 1, "b": {"c": "x", "d": {"t": True, "f": False}}, "e": 2.5, "f": "text", "g": None, "h": {}}
    stored = {"a": 1, "b": {"c": "x", "d": {"t": True, "f": False}}, "e": 2.5, "f": "text"}
    expect_ok(rest.put("/doc", value), stored)
    expect_ok(rest.get("/doc"), stored)
    expect_ok(rest.get("/doc/b/c"), "x")
    expect_ok(rest.get("/doc/b/d/f"), False)
    expect_ok(rest.put("/doc/e", 3), 3)
    assert rest.value("/doc/e") == 3


@bounded(20)
def test_arrays_are_stored_as_objects_and_plain_gets_render_dense_integer_keys_as_arrays(rest):
    expect_ok(rest.put("/list", [10, 20, 30]))
    expect_ok(rest.get("/list"), [10, 20, 30])
    expect_ok(rest.get("/list", {"format": "export"}), {"0": 10, "1": 20, "2": 30})
    expect_ok(rest.get("/list/1"), 20)
    expect_ok(rest.put("/sparse", {"2": "a", "9": "b"}))
    expect_ok(rest.get("/sparse"), {"2": "a", "9": "b"})


@bounded(20)
def test_put_null_and_delete_remove_data(rest):
    expect_ok(rest.put("/gone", {"a": 1, "b": 2}))
    expect_ok(rest.put("/gone/a", None), None)
    assert rest.value("/gone") == {"b": 2}
    expect_ok(rest.delete("/gone"), None)
    assert rest.value("/gone") is None
    expect_ok(rest.delete("/never/was"), None)


@bounded(20)
def test_post_creates_children_with_increasing_push_ids(rest):
    before = int(time.time() * 1000)
    names = []
    for index in range(25):
        response = expect_ok(rest.post("/log", {"n": index}))
        body = response.json()
        assert list(body) == ["name"], body
        names.append(body["name"])
    after = int(time.time() * 1000)
    for name in names:
        assert len(name) == 20 and all(char in model.PUSH_CHARS for char in name), name
        assert before - 1000 <= model.push_id_time(name) <= after + 1000, (name, before, after)
    assert names == sorted(names) and len(set(names)) == len(names), names
    stored = rest.value("/log")
    assert stored == {name: {"n": index} for index, name in enumerate(names)}


@bounded(20)
def test_patch_is_a_multi_path_update_answered_with_the_stored_values(rest):
    expect_ok(rest.put("/m", {"a": {"x": 1, "y": 2}, "b": {"z": 3}, "keep": True}))
    before = int(time.time() * 1000)
    response = expect_ok(rest.patch("/m", {"a/x": 10, "a/y": None, "b": {"w": 4}, "c": {".sv": "timestamp"}}))
    after = int(time.time() * 1000)
    echoed = response.json()
    assert set(echoed) == {"a/x", "a/y", "b", "c"}, echoed
    assert (echoed["a/x"], echoed["a/y"], echoed["b"]) == (10, None, {"w": 4}), echoed
    assert before <= echoed["c"] <= after, echoed
    assert rest.value("/m") == {"a": {"x": 10}, "b": {"w": 4}, "c": echoed["c"], "keep": True}


@bounded(20)
def test_server_values_are_resolved_in_put_and_patch_answers(rest):
    before = int(time.time() * 1000)
    response = expect_ok(rest.put("/sv", {"at": {".sv": "timestamp"}, "n": 5}))
    after = int(time.time() * 1000)
    stamp = response.json()["at"]
    assert isinstance(stamp, int) and before <= stamp <= after, response.json()
    expect_ok(rest.patch("/sv", {"n": {".sv": {"increment": 3}}}), {"n": 8})
    expect_ok(rest.put("/sv/fresh", {".sv": {"increment": 2.5}}), 2.5)
    expect_ok(rest.put("/sv/n", {".sv": {"increment": -10}}), -2)
    assert rest.value("/sv") == {"at": stamp, "n": -2, "fresh": 2.5}


@bounded(20)
def test_paths_allow_a_trailing_slash_empty_segments_and_percent_encoding(rest, server, ns):
    expect_ok(request(server.port, "PUT", url("/p/a%20b/c/.json", {"ns": ns}), "1"), 1)
    expect_ok(request(server.port, "GET", url("//p//a%20b//c.json", {"ns": ns})), 1)
    expect_ok(request(server.port, "GET", url("/p/.json", {"ns": ns})), {"a b": {"c": 1}})
    expect_ok(request(server.port, "GET", url("/p/%C3%A9t%C3%A9.json", {"ns": ns})), None)
    expect_ok(request(server.port, "PUT", url("/p/%C3%A9t%C3%A9.json", {"ns": ns}), '"summer"'), "summer")
    assert rest.value("/p") == {"a b": {"c": 1}, "\u00e9t\u00e9": "summer"}
    expect_ok(request(server.port, "GET", url("/.json", {"ns": ns})),
              {"p": {"a b": {"c": 1}, "\u00e9t\u00e9": "summer"}})


# ---------------------------------------------------------------------------------------------------------------
# print, format=export, priorities, shallow


@bounded(20)
def test_print_silent_answers_204_without_a_body_for_every_method(rest):
    cases = [
        ("PUT", "/s/a", {"x": 1}),
        ("POST", "/s/list", "pushed"),
        ("PATCH", "/s", {"b": 2}),
        ("GET", "/s", ...),
        ("DELETE", "/s/b", ...),
    ]
    for method, path, value in cases:
        if value is ...:
            response = rest.call(method, path, {"print": "silent"})
        else:
            response = rest.call(method, path, {"print": "silent"}, json_body=value)
        assert response.status == 204 and response.body == b"", (method, response.describe())
        assert response.header("Content-Length") in (None, "0"), response.describe()
    stored = rest.value("/s")
    assert stored["a"] == {"x": 1} and "b" not in stored and list(stored["list"].values()) == ["pushed"], stored


@bounded(20)
def test_print_pretty_indents_two_spaces_with_a_space_before_the_colon(rest):
    value = {"a": 1, "b": {"c": "x", "d": True}, "e": "text"}
    rest.put("/pretty", value)
    response = expect_ok(rest.get("/pretty", {"print": "pretty"}))
    assert response.text.rstrip("\n") == pretty(value), response.text
    response = expect_ok(rest.put("/pretty/b", {"c": "y"}, {"print": "pretty"}))
    assert response.text.rstrip("\n") == pretty({"c": "y"}), response.text


@bounded(20)
def test_format_export_includes_priorities_and_priority_paths_read_and_write_them(rest):
    written = {"a": {".value": 1, ".priority": 5}, "b": {"c": 2, ".priority": "x"}, "d": 3}
    expect_ok(rest.put("/pr", written))
    expect_ok(rest.get("/pr"), {"a": 1, "b": {"c": 2}, "d": 3})
    expect_ok(rest.get("/pr", {"format": "export"}), written)
    expect_ok(rest.get("/pr/a/.priority"), 5)
    expect_ok(rest.get("/pr/d/.priority"), None)
    expect_ok(rest.put("/pr/d/.priority", 7.5), 7.5)
    expect_ok(rest.get("/pr/d", {"format": "export"}), {".value": 3, ".priority": 7.5})
    expect_ok(rest.put("/pr/b/.priority", None), None)
    expect_ok(rest.get("/pr", {"format": "export"}),
              {"a": {".value": 1, ".priority": 5}, "b": {"c": 2}, "d": {".value": 3, ".priority": 7.5}})


@bounded(20)
def test_shallow_turns_object_children_into_true_and_returns_leaves(rest):
    rest.put("/sh", {"a": {"x": {"deep": 1}}, "b": 2, "c": "s"})
    expect_ok(rest.get("/sh", {"shallow": "true"}), {"a": True, "b": True, "c": True})
    expect_ok(rest.get("/sh/b", {"shallow": "true"}), 2)
    expect_ok(rest.get("/sh/a", {"shallow": "true"}), {"x": True})
    expect_ok(rest.get("/sh/none", {"shallow": "true"}), None)


@bounded(20)
def test_shallow_with_only_a_limit_is_the_firebase_cli_emptiness_check(rest):
    """Emulator quirk (rest-api.md §8.3): shallow=true&limitToFirst=1 without orderBy is accepted."""
    expect_ok(rest.get("/", {"shallow": "true", "limitToFirst": "1"}), None)
    rest.put("/", {"b": {"x": 1}, "a": 1, "c": True, "10": "n"})
    expect_ok(rest.get("/", {"shallow": "true", "limitToFirst": "1"}), {"10": True})
    expect_ok(rest.get("/", {"shallow": "true", "limitToFirst": "2"}), {"10": True, "a": True})
    expect_ok(rest.get("/", {"shallow": "true", "limitToLast": "2"}), {"b": True, "c": True})


@pytest.mark.parametrize("query", [
    {"orderBy": '"$key"'},
    {"orderBy": '"$key"', "limitToFirst": "1"},
    {"orderBy": '"a"', "startAt": "1"},
    {"orderBy": '"$value"', "equalTo": "1"},
    {"orderBy": '"$priority"', "endAt": "1"},
], ids=["orderBy", "orderBy+limit", "startAt", "equalTo", "endAt"])
@bounded(20)
def test_shallow_mixed_with_query_parameters_is_refused(rest, query):
    expect_error(rest.get("/", dict(query, shallow="true")), 400, SHALLOW_WITH_QUERY)


# ---------------------------------------------------------------------------------------------------------------
# Queries

QUERY_DATA = {
    "a": {"score": 10, "name": "ann"},
    "b": {"score": 20, "name": "bob"},
    "c": {"score": 20, "name": "cid"},
    "d": {"score": 30},
    "e": {"score": "high"},
    "f": {"name": "no score"},
    "g": {"score": True},
}


def expected(query: dict) -> dict:
    return model.to_plain(model.evaluate_query(model.normalize(QUERY_DATA), query)) or {}


@pytest.mark.parametrize("spelling", ["encoded", "sdk", "curl"])
@bounded(20)
def test_query_values_are_accepted_encoded_as_the_sdk_sends_them_and_raw_like_curl(rest, spelling):
    rest.put("/q", QUERY_DATA)
    values = {"orderBy": '"score"', "startAt": '20,"c"', "endAt": "30"}
    if spelling == "encoded":
        response = rest.get("/q", values)
    elif spelling == "sdk":  # requests keeps $ and , but encodes the quotes
        raw = "&".join(f"{name}={value.replace(chr(34), '%22')}" for name, value in values.items())
        response = rest.get("/q", raw=raw)
    else:
        raw = "&".join(f"{name}={value}" for name, value in values.items())
        response = rest.get("/q", raw=raw)
    expect_ok(response, {"c": QUERY_DATA["c"], "d": QUERY_DATA["d"]})


QUERY_CASES = [
    ({"orderBy": '"score"'}, {"i": "score"}),
    ({"orderBy": '"score"', "startAt": "20"}, {"i": "score", "sp": 20}),
    ({"orderBy": '"score"', "startAt": '20,"c"'}, {"i": "score", "sp": 20, "sn": "c"}),
    ({"orderBy": '"score"', "endAt": '20,"b"'}, {"i": "score", "ep": 20, "en": "b"}),
    ({"orderBy": '"score"', "equalTo": "20"}, {"i": "score", "sp": 20, "ep": 20}),
    ({"orderBy": '"score"', "equalTo": "true"}, {"i": "score", "sp": True, "ep": True}),
    ({"orderBy": '"score"', "equalTo": "null"}, {"i": "score", "sp": None, "ep": None}),
    ({"orderBy": '"score"', "startAt": '"a"'}, {"i": "score", "sp": "a"}),
    ({"orderBy": '"score"', "startAfter": "20"}, {"i": "score", "sp": 20, "sn": model.MAX_NAME, "sin": False}),
    ({"orderBy": '"score"', "endBefore": "20"}, {"i": "score", "ep": 20, "en": model.MIN_NAME, "ein": False}),
    ({"orderBy": '"score"', "startAfter": '20,"b"'}, {"i": "score", "sp": 20, "sn": "b", "sin": False}),
    ({"orderBy": '"score"', "limitToFirst": "2"}, {"i": "score", "l": 2, "vf": "l"}),
    ({"orderBy": '"score"', "limitToLast": "3"}, {"i": "score", "l": 3, "vf": "r"}),
    ({"orderBy": '"score"', "startAt": "15", "limitToLast": "2"}, {"i": "score", "sp": 15, "l": 2, "vf": "r"}),
    ({"orderBy": '"$key"', "startAt": '"b"', "endAt": '"d"'}, {"i": ".key", "sp": "b", "ep": "d"}),
    ({"orderBy": '"$key"', "startAfter": '"b"'}, {"i": ".key", "sp": "b", "sin": False}),
    ({"orderBy": '"$key"', "equalTo": '"e"'}, {"i": ".key", "sp": "e", "ep": "e"}),
    ({"orderBy": '"$key"', "limitToLast": "2"}, {"i": ".key", "l": 2, "vf": "r"}),
    ({"orderBy": '"$priority"', "limitToFirst": "3"}, {"l": 3, "vf": "l"}),
    ({"orderBy": '"name"', "startAt": '"bob"'}, {"i": "name", "sp": "bob"}),
]


@pytest.mark.parametrize("params,query", QUERY_CASES, ids=[
    "&".join(f"{k}={v}" for k, v in params.items()) for params, _ in QUERY_CASES])
@bounded(20)
def test_query_results_match_the_model(rest, params, query):
    rest.put("/q", QUERY_DATA)
    expect_ok(rest.get("/q", params), expected(query))


@bounded(20)
def test_query_on_a_deep_child_path_and_on_values(rest):
    data = {"a": {"d": {"h": 3}}, "b": {"d": {"h": 1}}, "c": {"d": {"h": 2}}}
    rest.put("/deep", data)
    expect_ok(rest.get("/deep", {"orderBy": '"d/h"', "startAt": "2"}), {"a": data["a"], "c": data["c"]})
    rest.put("/scores", {"x": 5, "y": 1, "z": 9, "w": 7})
    expect_ok(rest.get("/scores", {"orderBy": '"$value"', "limitToLast": "2"}), {"z": 9, "w": 7})


@bounded(20)
def test_query_with_format_export_keeps_priorities(rest):
    rest.put("/qe", {"a": {".value": 1, ".priority": 2}, "b": {".value": 5, ".priority": 1}})
    expect_ok(rest.get("/qe", {"orderBy": '"$value"', "startAt": "2", "format": "export"}),
              {"b": {".value": 5, ".priority": 1}})


@bounded(20)
def test_order_by_must_be_json(rest):
    expect_error(rest.get("/q", {"orderBy": "score"}), 400, ORDER_BY_NOT_JSON)
    expect_error(rest.get("/q", {"orderBy": "$key"}), 400, ORDER_BY_NOT_JSON)
    expect_error(rest.get("/q", {"orderBy": "3"}), 400, ORDER_BY_NOT_JSON)


@pytest.mark.parametrize("parameter,value", [
    ("startAt", "1"), ("endAt", '"b"'), ("equalTo", "true"), ("limitToFirst", "1"), ("limitToLast", "2"),
    ("startAfter", "1"), ("endBefore", "1"),
])
@bounded(20)
def test_range_and_limit_parameters_need_order_by(rest, parameter, value):
    expect_error(rest.get("/q", {parameter: value}), 400, ORDER_BY_MISSING)


@pytest.mark.parametrize("parameter,value", [
    ("startAt", "1"), ("endAt", "true"), ("equalTo", "2.5"), ("startAt", '1,"a"'),
])
@bounded(20)
def test_key_order_needs_string_bounds(rest, parameter, value):
    expect_error(rest.get("/q", {"orderBy": '"$key"', parameter: value}), 400, KEY_BOUND_NOT_STRING)


@pytest.mark.parametrize("parameter", ["startAt", "endAt", "equalTo"])
@pytest.mark.parametrize("value", ["abc", '"unterminated', "{", '{"a":1}', "[1]", ""])
@bounded(20)
def test_bounds_must_be_json_primitives(rest, parameter, value):
    expect_error(rest.get("/q", {"orderBy": '"score"', parameter: value}), 400, BOUND_NOT_PRIMITIVE)


@pytest.mark.parametrize("value", ['1,b', '1,2', '1,"a'])
@bounded(20)
def test_a_bound_key_name_must_be_a_json_string(rest, value):
    """The contract fixes no text for a bad key name after the comma; it must still be a 400 error."""
    response = rest.get("/q", {"orderBy": '"score"', "startAt": value})
    assert response.status == 400 and response.json().get("error"), response.describe()


@pytest.mark.parametrize("parameter", ["limitToFirst", "limitToLast"])
@pytest.mark.parametrize("value", ["0", "-1", "abc", "1.5", "", "1e3"])
@bounded(20)
def test_limits_must_be_positive_integers(rest, parameter, value):
    expect_error(rest.get("/q", {"orderBy": '"$key"', parameter: value}), 400,
                 f"Query parameter {parameter} must be a positive integer")


@bounded(20)
def test_both_limits_and_equal_to_with_a_range_are_refused(rest):
    expect_error(rest.get("/q", {"orderBy": '"$key"', "limitToFirst": "1", "limitToLast": "1"}), 400, BOTH_LIMITS)
    expect_error(rest.get("/q", {"orderBy": '"a"', "equalTo": "1", "startAt": "1"}), 400, EQUAL_TO_WITH_RANGE)
    expect_error(rest.get("/q", {"orderBy": '"a"', "equalTo": "1", "endAt": "1"}), 400, EQUAL_TO_WITH_RANGE)


@pytest.mark.parametrize("value", ["0ms", "0s", "0min", "16min", "900001ms", "901s", "abc", "10", "-5s", "10h", ""])
@bounded(20)
def test_invalid_timeouts_are_refused(rest, value):
    expect_error(rest.get("/t", {"timeout": value}), 400, f"Invalid timeout: {value}")


@pytest.mark.parametrize("value", ["1ms", "10s", "3min", "15min", "900000ms", "900s"])
@bounded(20)
def test_valid_timeouts_are_accepted(rest, value):
    rest.put("/t", 1)
    expect_ok(rest.get("/t", {"timeout": value}), 1)


@bounded(20)
def test_write_size_limit_tiers(rest):
    expect_error(rest.put("/w", 1, {"writeSizeLimit": "huge"}), 400, "Invalid writeSizeLimit: huge")
    expect_error(rest.put("/w", 1, {"writeSizeLimit": ""}), 400, "Invalid writeSizeLimit: ")
    big = "x" * 20_000
    expect_error(rest.put("/w", big, {"writeSizeLimit": "tiny"}), 400, WRITE_TOO_BIG)
    expect_error(rest.post("/w", big, {"writeSizeLimit": "tiny"}), 400, WRITE_TOO_BIG)
    expect_error(rest.patch("/w", {"a": big}, {"writeSizeLimit": "tiny"}), 400, WRITE_TOO_BIG)
    assert rest.value("/w") is None, "a refused write was applied"
    for tier in ("tiny", "small", "medium", "large", "unlimited"):
        expect_ok(rest.put(f"/w/{tier}", "x" * 1000, {"writeSizeLimit": tier}))
    expect_ok(rest.put("/w/big", big, {"writeSizeLimit": "small"}))
    expect_ok(rest.delete("/w", {"writeSizeLimit": "tiny"}), None)


@bounded(20)
def test_unknown_and_unsupported_parameters_are_ignored(rest):
    rest.put("/u", {"a": 1})
    expect_ok(rest.get("/u", {"foo": "bar", "ac": "app-check-token"}), {"a": 1})
    expect_ok(rest.put("/u/b", 2, {"disableTriggers": "true", "whatever": "1"}), 2)


@pytest.mark.parametrize("name", ["cb", "my.app.handle", "$jsonp_1", "_x9"])
@bounded(20)
def test_callback_wraps_a_get_as_jsonp(rest, name):
    rest.put("/j", {"a": 1, "b": "x"})
    response = rest.get("/j", {"callback": name})
    assert response.status == 200, response.describe()
    assert response.header("Content-Type") == "application/javascript; charset=utf-8", response.describe()
    text = response.text.rstrip("\n")
    assert text.startswith(name + "(") and text.endswith(");"), text
    assert json.loads(text[len(name) + 1:-2]) == {"a": 1, "b": "x"}, text
    empty = rest.get("/j/none", {"callback": name}).text.rstrip("\n")
    assert empty == f"{name}(null);", empty


@pytest.mark.parametrize("name", ["1abc", "a-b", "alert(1)", "a..b", "a.", ".a", "", "a b", "a;b"])
@bounded(20)
def test_callback_must_be_a_javascript_function_name(rest, name):
    expect_error(rest.get("/j", {"callback": name}), 400, "Invalid callback: use a JavaScript function name")


@bounded(20)
def test_download_names_the_attachment(rest):
    rest.put("/d", {"a": 1})
    response = expect_ok(rest.get("/d", {"download": "backup.json"}), {"a": 1})
    assert response.header("Content-Disposition") == 'attachment; filename="backup.json"', response.describe()
    # A quote (or backslash) followed by a combining mark cannot close the quoted name (found by RESTPathQueryFuzz).
    response = expect_ok(rest.get("/d", {"download": "a\"\u0301; filename*=UTF-8''x.exe"}), {"a": 1})
    header = response.header("Content-Disposition")
    assert header.startswith('attachment; filename="a') and header.endswith("x.exe\"") and header.count('"') == 2, \
        response.describe()


@pytest.mark.parametrize("order_by,index_name", [('"score"', "score"), ('"$value"', ".value"),
                                                 ('"name/first"', "name/first")])
@bounded(20)
def test_unindexed_queries_are_refused_when_rules_declare_indexes(secured, order_by, index_name):
    expect_error(secured.get("/unindexed", {"orderBy": order_by}), 400,
                 f'Index not defined, add ".indexOn": "{index_name}", for path "/unindexed", to the rules')
    expect_error(secured.get("/unindexed", {"orderBy": order_by, "limitToFirst": "1"}, headers=ADMIN), 400,
                 f'Index not defined, add ".indexOn": "{index_name}", for path "/unindexed", to the rules')


@bounded(20)
def test_indexed_key_and_priority_queries_are_served_under_rules(secured):
    expect_ok(secured.put("/indexed", {"a": {"score": 2}, "b": {"score": 1}}, headers=ADMIN))
    expect_ok(secured.get("/indexed", {"orderBy": '"score"', "limitToFirst": "1"}), {"b": {"score": 1}})
    expect_ok(secured.get("/unindexed", {"orderBy": '"$key"', "limitToFirst": "1"}), None)
    expect_ok(secured.get("/unindexed", {"orderBy": '"$priority"', "limitToFirst": "1"}), None)


@bounded(20)
def test_queries_without_a_rules_file_need_no_index(rest):
    rest.put("/any", {"a": {"score": 2}, "b": {"score": 1}})
    expect_ok(rest.get("/any", {"orderBy": '"score"', "limitToFirst": "1"}), {"b": {"score": 1}})
    expect_ok(rest.get("/any", {"orderBy": '"$value"'}), {"a": {"score": 2}, "b": {"score": 1}})


# ---------------------------------------------------------------------------------------------------------------
# Bodies


@pytest.mark.parametrize("method", ["PUT", "POST"])
@pytest.mark.parametrize("body", ["{", '{"a":}', "", "nul", "[1,]", '{"a":1}x', "'single'", "{a:1}", '"\\x"',
                                  "\xff"])
@bounded(20)
def test_unparsable_put_and_post_bodies_are_refused(rest, method, body):
    data = body.encode("latin-1") if body == "\xff" else body
    expect_error(rest.call(method, "/bad", body=data), 400, BAD_JSON)
    assert rest.value("/bad") is None


@pytest.mark.parametrize("body", ["[1,2]", "5", '"text"', "true", "null", "{", "", '{"a":1', "[]"])
@bounded(20)
def test_patch_needs_a_json_object(rest, body):
    expect_error(rest.call("PATCH", "/bad", body=body), 400, BAD_PATCH)


def key_position(text: str, key: str) -> str:
    """1-based line:column of the opening quote of member ``key`` (the first one in ``text``)."""
    offset = text.index(json.dumps(key) + ":") if json.dumps(key) + ":" in text else text.index(json.dumps(key))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"{line}:{column}"


KEY_CASES = [
    '{"a.b":1}',
    '{"ok":1,"b$":2}',
    '{"x":{"y":{"#z":true}}}',
    '{"":1}',
    '{"a":{"[":1}}',
    '{"a":{"]":1}}',
    '{"a/b":1}',
    '{\n  "fine": {\n    "bad.key": 1\n  }\n}',
    '{"list":[{"ok":1},{"no$":2}]}',
]


@pytest.mark.parametrize("method", ["PUT", "POST"])
@pytest.mark.parametrize("body", KEY_CASES, ids=range(len(KEY_CASES)))
@bounded(20)
def test_invalid_keys_in_bodies_are_reported_with_their_line_and_column(rest, method, body):
    bad = next(key for key in ("a.b", "b$", "#z", "", "[", "]", "a/b", "bad.key", "no$")
               if json.dumps(key) + ":" in body)
    text = (f"Invalid data; couldn't parse key beginning at {key_position(body, bad)}. "
            "Key value can't be empty or contain $ # [ ] / or .")
    expect_error(rest.call(method, "/keys", body=body), 400, text)
    assert rest.value("/keys") is None


@bounded(20)
def test_invalid_keys_inside_patch_values_are_reported_with_their_position(rest):
    body = '{"a/b": {"ok": 1, "bad.key": 2}}'
    text = (f"Invalid data; couldn't parse key beginning at {key_position(body, 'bad.key')}. "
            "Key value can't be empty or contain $ # [ ] / or .")
    expect_error(rest.call("PATCH", "/keys", body=body), 400, text)
    response = rest.call("PATCH", "/keys", body='{"a.b": 1}')
    assert response.status == 400 and response.json()["error"].startswith("Invalid data; "), response.describe()
    assert rest.value("/keys") is None


@pytest.mark.parametrize("name,body", [
    ("too deep", "{" + '"k":{' * 40 + '"v":1' + "}" * 41),
    ("unknown server value", '{"a":{".sv":"nonsense"}}'),
    ("object priority", '{"a":{".value":1,".priority":{"x":1}}}'),
    (".value with children", '{"a":{".value":1,"b":2}}'),
])
@bounded(20)
def test_other_invalid_data_is_refused_with_a_reason(rest, name, body):
    response = rest.call("PUT", "/inv", body=body)
    assert response.status == 400, response.describe()
    error = response.json()["error"]
    assert error.startswith("Invalid data; ") and len(error) > len("Invalid data; "), error
    assert response.body == error_body(error)
    assert rest.value("/inv") is None


def send_oversize(connection: HttpConnection, head: bytes, body: bytes) -> HttpResponse:
    """Sends the head, gives the server a moment to refuse on the declared size, else sends the body; returns the
    answer (a server may answer and close before reading the body, so a broken pipe is expected)."""
    connection.send_raw(head)
    try:
        return connection.read_response(timeout=2)
    except socket.timeout:
        pass
    try:
        connection.send_raw(body)
    except (BrokenPipeError, ConnectionResetError):
        pass
    return connection.read_response()


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
@bounded(30)
def test_an_oversize_body_gets_413_and_the_connection_is_closed(start_server, ns, framing):
    limit = 65536
    with EnvironmentFor(CANOPY_SERVER_MAX_BODY_BYTES=str(limit)):
        small = start_server()
    target = url("/big.json", {"ns": ns})
    fitting = json.dumps("y" * (limit - 100))
    expect_ok(request(small.port, "PUT", target, fitting))
    body = json.dumps("x" * (limit + 10)).encode()
    host = f"127.0.0.1:{small.port}"
    with HttpConnection(small.port) as connection:
        if framing == "content-length":
            head = f"PUT {target} HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
            response = send_oversize(connection, head, body)
        else:
            head = f"PUT {target} HTTP/1.1\r\nHost: {host}\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
            chunks = b"".join(b"%x\r\n" % len(body[i:i + 8192]) + body[i:i + 8192] + b"\r\n"
                              for i in range(0, len(body), 8192)) + b"0\r\n\r\n"
            response = send_oversize(connection, head, chunks)
        assert response.status == 413, response.describe()
        assert isinstance(response.json().get("error"), str), response.describe()
        connection.wait_closed(10)
    assert json.loads(request(small.port, "GET", target, headers=ADMIN).body) == "y" * (limit - 100)


# ---------------------------------------------------------------------------------------------------------------
# Paths and methods


@pytest.mark.parametrize("path", ["/x/a.b.json", "/x/a%23b.json", "/x/a$b.json", "/x/%5Bb%5D.json",
                                  "/x/.priority/y.json", "/x/a%00b.json", "/x/a%7Fb.json"])
@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
@bounded(20)
def test_invalid_keys_in_the_path_are_refused(server, ns, path, method):
    body = "1" if method == "PUT" else None
    expect_error(request(server.port, method, url(path, {"ns": ns}), body), 400, BAD_PATH)


@pytest.mark.parametrize("method,path", [("GET", "/x"), ("PUT", "/x"), ("GET", "/"), ("DELETE", "/a/b"),
                                         ("GET", "/x.txt"), ("PATCH", "/x.jsonx"), ("GET", "/index.html")])
@bounded(20)
def test_paths_without_json_get_405(server, ns, method, path):
    body = "{}" if method in ("PUT", "PATCH") else None
    expect_error(request(server.port, method, url(path, {"ns": ns}), body), 405, NOT_REST)


@pytest.mark.parametrize("method", ["FOO", "TRACE", "PROPFIND", "LINK"])
@bounded(20)
def test_unknown_methods_get_405_with_allow(server, ns, method):
    response = request(server.port, method, url("/x.json", {"ns": ns}))
    expect_error(response, 405, f"Method not allowed: {method}")
    allow = response.header("Allow") or ""
    assert {"GET", "PUT", "POST", "PATCH", "DELETE"} <= {item.strip() for item in allow.split(",")}, allow


@pytest.mark.parametrize("how", ["header", "parameter"])
@bounded(20)
def test_post_with_a_method_override_acts_as_that_method(rest, how):
    def override(method: str, body: object, path: str = "/o") -> object:
        if how == "header":
            return rest.call("POST", path, headers={"X-HTTP-Method-Override": method}, json_body=body)
        return rest.call("POST", path, {"x-http-method-override": method}, json_body=body)

    expect_ok(override("PUT", {"a": 1, "b": 2}), {"a": 1, "b": 2})
    assert rest.value("/o") == {"a": 1, "b": 2}, "override PUT created a push child instead"
    expect_ok(override("PATCH", {"c": 3}), {"c": 3})
    assert rest.value("/o") == {"a": 1, "b": 2, "c": 3}
    expect_ok(override("DELETE", None, "/o/a"), None)
    assert rest.value("/o") == {"b": 2, "c": 3}


# ---------------------------------------------------------------------------------------------------------------
# Auth and rules


@pytest.mark.parametrize("carrier", ["auth", "access_token", "bearer"])
@pytest.mark.parametrize("credential", ["garbage", "a.b.c", "wrong-secret", "none-alg", "hs256-on-header-only"])
@bounded(20)
def test_unparsable_or_badly_signed_tokens_get_401(secured, carrier, credential):
    if credential == "wrong-secret":
        value = tokens.hs256("another-secret-0123456789abcdefghij", tokens.claims("alice"))
    elif credential == "none-alg":
        value = tokens.unsigned(tokens.claims("alice"))
    elif credential == "hs256-on-header-only":
        value = token("alice").rsplit(".", 1)[0] + "."
    else:
        value = credential
    if carrier == "bearer":
        response = secured.get("/public/x", headers=bearer(value))
    else:
        response = secured.get("/public/x", {carrier: value})
    expect_error(response, 401, BAD_TOKEN)


@pytest.mark.parametrize("carrier", ["auth", "access_token", "bearer"])
@bounded(20)
def test_expired_tokens_get_401(secured, carrier):
    old = token("alice", iat=int(time.time()) - 7200, lifetime=3600)
    response = (secured.get("/users/alice", headers=bearer(old)) if carrier == "bearer"
                else secured.get("/users/alice", {carrier: old}))
    expect_error(response, 401, EXPIRED_TOKEN)


@pytest.mark.parametrize("carrier", ["auth", "access_token", "bearer"])
@bounded(20)
def test_a_valid_token_is_judged_by_the_rules(secured, carrier):
    alice = token("alice")

    def as_alice(method: str, path: str, body: object = ...) -> object:
        kw = {} if body is ... else {"json_body": body}
        if carrier == "bearer":
            return secured.call(method, path, headers=bearer(alice), **kw)
        return secured.call(method, path, {carrier: alice}, **kw)

    expect_ok(as_alice("PUT", "/users/alice", {"age": 30}), {"age": 30})
    expect_ok(as_alice("GET", "/users/alice"), {"age": 30})
    expect_error(as_alice("GET", "/users/bob"), 401, DENIED)
    expect_error(as_alice("PUT", "/users/bob", {"age": 1}), 401, DENIED)


@bounded(20)
def test_rules_denials_are_401_permission_denied_and_write_nothing(secured):
    alice = {"auth": token("alice")}
    expect_ok(secured.put("/users/bob", {"age": 40}, headers=ADMIN))
    expect_error(secured.get("/users/bob"), 401, DENIED)
    expect_error(secured.get("/users/bob", alice), 401, DENIED)
    expect_error(secured.get("/users", alice), 401, DENIED)
    expect_error(secured.put("/users/bob/age", 1, alice), 401, DENIED)
    expect_error(secured.post("/users/bob", {"x": 1}, alice), 401, DENIED)
    expect_error(secured.delete("/users/bob", alice), 401, DENIED)
    expect_error(secured.patch("/users", {"alice/age": 1, "bob/age": 1}, alice), 401, DENIED)
    expect_error(secured.put("/other", 1), 401, DENIED)
    expect_error(secured.get("/users/bob", {"shallow": "true"}), 401, DENIED)
    expect_error(secured.get("/users/bob", {"print": "silent"}), 401, DENIED)
    assert secured.value("/users") == {"bob": {"age": 40}}, "a denied write was applied"


@pytest.mark.parametrize("carrier", ["bearer", "auth", "access_token"])
@bounded(20)
def test_the_owner_credential_bypasses_the_rules(secured, carrier):
    def as_owner(method: str, path: str, body: object = ...) -> object:
        kw = {} if body is ... else {"json_body": body}
        if carrier == "bearer":
            return secured.call(method, path, headers=ADMIN, **kw)
        return secured.call(method, path, {carrier: "owner"}, **kw)

    expect_ok(as_owner("PUT", "/users/zed", {"age": 1}), {"age": 1})
    expect_ok(as_owner("PUT", "/elsewhere", 5), 5)
    expect_ok(as_owner("GET", "/"), {"users": {"zed": {"age": 1}}, "elsewhere": 5})


@bounded(20)
def test_auth_variable_override_evaluates_the_rules_as_that_user(secured):
    as_alice = {"auth_variable_override": '{"uid":"alice"}'}
    expect_ok(secured.put("/users/alice", {"n": 1}, as_alice, headers=ADMIN), {"n": 1})
    expect_ok(secured.get("/users/alice", as_alice, headers=ADMIN), {"n": 1})
    expect_error(secured.get("/users/bob", as_alice, headers=ADMIN), 401, DENIED)
    expect_error(secured.get("/users/alice", {"auth_variable_override": "null"}, headers=ADMIN), 401, DENIED)
    expect_ok(secured.get("/public/x", {"auth_variable_override": "null"}, headers=ADMIN), None)


# ---------------------------------------------------------------------------------------------------------------
# ETags


def etag_of(value: object) -> str:
    return model.node_hash(value) or "null_etag"


@bounded(20)
def test_get_with_x_firebase_etag_returns_the_wire_hash(rest):
    value = {"a": 1, "b": {"c": "x"}, "p": {".value": 2, ".priority": 1}}
    rest.put("/e", value)
    response = expect_ok(rest.get("/e", headers={"X-Firebase-ETag": "true"}), {"a": 1, "b": {"c": "x"}, "p": 2})
    assert response.header("ETag") == etag_of(value), response.describe()
    assert len(response.header("ETag")) == 28
    response = expect_ok(rest.get("/e/none", headers={"X-Firebase-ETag": "true"}), None)
    assert response.header("ETag") == "null_etag"
    assert rest.get("/e").header("ETag") is None, "ETag without X-Firebase-ETag"


@bounded(20)
def test_if_none_match_answers_304_while_the_etag_matches(rest):
    rest.put("/inm", {"v": 1})
    current = etag_of({"v": 1})
    response = rest.get("/inm", headers={"if-none-match": current})
    assert response.status == 304 and response.body == b"", response.describe()
    response = expect_ok(rest.get("/inm", headers={"if-none-match": "stale-etag"}), {"v": 1})
    assert response.header("ETag") == current
    rest.put("/inm/v", 2)
    response = expect_ok(rest.get("/inm", headers={"if-none-match": current}), {"v": 2})
    assert response.header("ETag") == etag_of({"v": 2})
    response = rest.get("/inm/empty", headers={"if-none-match": "null_etag"})
    assert response.status == 304, response.describe()


@bounded(20)
def test_if_match_writes_only_when_the_etag_matches(rest):
    rest.put("/im", {"v": 1})
    response = expect_ok(rest.put("/im", {"v": 2}, headers={"if-match": etag_of({"v": 1})}), {"v": 2})
    assert response.header("ETag") == etag_of({"v": 2}), response.describe()
    response = rest.put("/im", {"v": 3}, headers={"if-match": etag_of({"v": 1})})
    assert response.status == 412, response.describe()
    assert response.json() == {"v": 2} and response.header("ETag") == etag_of({"v": 2}), response.describe()
    assert rest.value("/im") == {"v": 2}, "a write with a stale if-match was applied"
    response = rest.delete("/im", headers={"if-match": "stale"})
    assert response.status == 412 and response.json() == {"v": 2}, response.describe()
    assert response.header("ETag") == etag_of({"v": 2})
    assert rest.value("/im") == {"v": 2}
    expect_ok(rest.delete("/im", headers={"if-match": etag_of({"v": 2})}), None)
    assert rest.value("/im") is None


@bounded(20)
def test_if_match_null_etag_creates_only_if_absent(rest):
    response = expect_ok(rest.put("/once", "first", headers={"if-match": "null_etag"}), "first")
    assert response.header("ETag") == etag_of("first")
    response = rest.put("/once", "second", headers={"if-match": "null_etag"})
    assert response.status == 412 and response.json() == "first", response.describe()
    assert response.header("ETag") == etag_of("first")
    assert rest.value("/once") == "first"
    response = rest.put("/absent", "x", headers={"if-match": etag_of("x")})
    assert response.status == 412 and response.json() is None and response.header("ETag") == "null_etag", \
        response.describe()


@pytest.mark.parametrize("method", ["GET", "POST", "PATCH"])
@bounded(20)
def test_if_match_on_get_post_and_patch_is_refused(rest, method):
    rest.put("/imx", {"v": 1})
    body = {"v": 9} if method != "GET" else ...
    kw = {} if body is ... else {"json_body": body}
    response = rest.call(method, "/imx", headers={"if-match": etag_of({"v": 1})}, **kw)
    expect_error(response, 400, IF_MATCH_NOT_SUPPORTED)
    assert rest.value("/imx") == {"v": 1}


@bounded(20)
def test_writes_with_x_firebase_etag_return_the_etag_of_the_written_data(rest):
    response = expect_ok(rest.put("/we", {"a": 1}, headers={"X-Firebase-ETag": "true"}), {"a": 1})
    assert response.header("ETag") == etag_of({"a": 1})
    response = expect_ok(rest.post("/we/list", {"b": 2}, headers={"X-Firebase-ETag": "true"}))
    assert response.header("ETag") == etag_of({"b": 2}), response.describe()
    response = expect_ok(rest.delete("/we", headers={"X-Firebase-ETag": "true"}), None)
    assert response.header("ETag") == "null_etag"


# ---------------------------------------------------------------------------------------------------------------
# CORS


@bounded(20)
def test_every_answer_allows_any_origin_by_default(rest):
    for response in (rest.get("/c", headers={"Origin": "https://app.example"}), rest.put("/c", 1),
                     rest.get("/c", {"orderBy": "bad"}), rest.call("PUT", "/c", body="{")):
        assert response.header("Access-Control-Allow-Origin") == "*", response.describe()
        assert response.header("Cache-Control") == "no-cache"


@bounded(20)
def test_options_preflight_answers_204_with_the_allowed_methods_and_headers(server, ns):
    target = url("/c.json", {"ns": ns})
    response = request(server.port, "OPTIONS", target, headers={
        "Origin": "https://app.example", "Access-Control-Request-Method": "PATCH",
        "Access-Control-Request-Headers": "authorization, content-type, x-firebase-etag"})
    assert response.status == 204 and response.body == b"", response.describe()
    assert response.header("Access-Control-Allow-Origin") == "*"
    assert response.header("Access-Control-Allow-Methods") == "GET, PUT, POST, PATCH, DELETE, OPTIONS"
    assert response.header("Access-Control-Allow-Headers") == "authorization, content-type, x-firebase-etag"
    assert (response.header("Access-Control-Max-Age") or "").isdigit(), response.describe()
    response = request(server.port, "OPTIONS", target, headers={"Origin": "https://app.example",
                                                                "Access-Control-Request-Method": "GET"})
    assert response.status == 204, response.describe()
    assert response.header("Access-Control-Allow-Headers"), "no default Access-Control-Allow-Headers"


@bounded(30)
def test_configured_cors_origins_are_echoed_and_others_get_no_allow_origin(start_server, ns):
    started = start_server("--cors-origin", "https://app.example", "--cors-origin", "https://admin.example")
    target = url("/c.json", {"ns": ns})
    for origin in ("https://app.example", "https://admin.example"):
        response = request(started.port, "GET", target, headers={"Origin": origin})
        assert response.status == 200 and response.header("Access-Control-Allow-Origin") == origin, \
            response.describe()
        assert "origin" in (response.header("Vary") or "").lower(), response.describe()
        response = request(started.port, "OPTIONS", target, headers={
            "Origin": origin, "Access-Control-Request-Method": "PUT"})
        assert response.status == 204 and response.header("Access-Control-Allow-Origin") == origin, \
            response.describe()
    for headers in ({"Origin": "https://evil.example"}, {}):
        response = request(started.port, "GET", target, headers=headers)
        assert response.status == 200 and response.header("Access-Control-Allow-Origin") is None, \
            response.describe()
    response = request(started.port, "OPTIONS", target, headers={"Origin": "https://evil.example",
                                                                 "Access-Control-Request-Method": "PUT"})
    assert response.header("Access-Control-Allow-Origin") is None, response.describe()


# ---------------------------------------------------------------------------------------------------------------
# Namespaces


@bounded(20)
def test_namespaces_come_from_ns_then_the_host_then_the_default(server, ns):
    other = ns[:40] + "-b"
    expect_ok(request(server.port, "PUT", url("/where.json", {"ns": ns}), '"param"'))
    expect_ok(request(server.port, "GET", url("/where.json", {"ns": other})), None)
    expect_ok(request(server.port, "GET", "/where.json", host_header=f"{ns}.firebaseio.com"), "param")
    expect_ok(request(server.port, "GET", "/where.json", host_header=f"{ns}.europe-west1.firebasedatabase.app"),
              "param")
    expect_ok(request(server.port, "GET", url("/where.json", {"ns": other}), host_header=f"{ns}.firebaseio.com"),
              None)
    expect_ok(request(server.port, "PUT", "/where.json", '"host"', host_header=f"{other}.example.com:9000"))
    expect_ok(request(server.port, "GET", url("/where.json", {"ns": other})), "host")
    marker = f"default-{ns}"
    expect_ok(request(server.port, "PUT", f"/{marker}.json", '"default"'))
    for host in (f"127.0.0.1:{server.port}", "localhost", f"localhost:{server.port}", "[::1]:9000"):
        expect_ok(request(server.port, "GET", f"/{marker}.json", host_header=host), "default")
    expect_ok(request(server.port, "GET", url(f"/{marker}.json", {"ns": "default"})), "default")
    expect_ok(request(server.port, "DELETE", f"/{marker}.json"), None)


@pytest.mark.parametrize("name", ["bad.name", "has space", "x" * 64, "caf\u00e9"])
@bounded(20)
def test_an_invalid_namespace_is_refused_naming_it(server, name):
    response = request(server.port, "GET", url("/x.json", {"ns": name}))
    assert response.status == 400, response.describe()
    assert name[:60] in response.json()["error"], response.describe()
    check_rest_headers(response)


# ---------------------------------------------------------------------------------------------------------------
# Admin endpoints


def rules_document(response: HttpResponse) -> object:
    """The rules text an endpoint answered, parsed (``//`` line comments allowed, as in rules files)."""
    assert response.status == 200, response.describe()
    lines = [line for line in response.text.splitlines() if not line.lstrip().startswith("//")]
    return json.loads("\n".join(lines))


@bounded(30)
def test_rules_are_read_and_replaced_by_the_admin_and_apply_at_once(start_server, tmp_path, ns):
    path = tmp_path / "database.rules.json"
    path.write_text(json.dumps(RULES))
    started = start_server("--rules", str(path), "--auth-secret", SECRET)
    rest = Rest(started.port, ns)
    rules_url = "/.settings/rules.json"
    assert rules_document(request(started.port, "GET", url(rules_url, {"ns": ns}), headers=ADMIN)) == RULES
    expect_ok(rest.put("/open/x", 1, headers=ADMIN))
    expect_error(rest.get("/open/x"), 401, DENIED)
    expect_ok(rest.get("/public/x"), None)
    replaced = {"rules": {"open": {".read": True, ".write": "auth != null"}}}
    # The CLI uploads the raw file: comments and all.
    text = '{\n  // uploaded by the CLI\n  "rules": {"open": {".read": true, ".write": "auth != null"}}\n}\n'
    response = request(started.port, "PUT", url(rules_url, {"ns": ns}), text, headers=ADMIN)
    assert response.status == 200, response.describe()
    expect_ok(rest.get("/open/x"), 1)
    expect_error(rest.get("/public/x"), 401, DENIED)
    expect_error(rest.put("/open/x", 2), 401, DENIED)
    expect_ok(rest.put("/open/x", 2, {"auth": token("alice")}), 2)
    assert rules_document(request(started.port, "GET", url(rules_url, {"ns": ns}), headers=ADMIN)) == replaced
    response = request(started.port, "PUT", url(rules_url, {"ns": ns}), '{"rules": {".read": "nope("}}',
                       headers=ADMIN)
    assert response.status == 400 and response.json().get("error"), response.describe()
    assert rules_document(request(started.port, "GET", url(rules_url, {"ns": ns}), headers=ADMIN)) == replaced
    expect_ok(rest.get("/open/x"), 2)
    rest.close()


@bounded(20)
def test_the_rules_endpoint_refuses_non_admins(rules_server, ns):
    target = url("/.settings/rules.json", {"ns": ns})
    expect_error(request(rules_server.port, "GET", target), 401, DENIED, cors=False)
    expect_error(request(rules_server.port, "GET", target, headers=bearer(token("alice"))), 401, DENIED, cors=False)
    expect_error(request(rules_server.port, "PUT", target, json.dumps({"rules": {".read": True, ".write": True}})),
                 401, DENIED, cors=False)
    expect_error(request(rules_server.port, "PUT", url(target, {"auth": token("alice")}),
                         json.dumps({"rules": {".read": True}})), 401, DENIED, cors=False)
    assert rules_document(request(rules_server.port, "GET", target, headers=ADMIN)) == RULES


@bounded(20)
def test_inspect_databases_lists_the_open_namespaces(server, ns):
    names = [f"{ns[:40]}-{index}" for index in range(3)]
    for name in names:
        expect_ok(request(server.port, "PUT", url("/x.json", {"ns": name}), "1"))
    response = expect_ok(request(server.port, "GET", url("/.inspect/databases.json", {"ns": names[0]}),
                                 headers=ADMIN), cors=False)
    listed = response.json()
    assert isinstance(listed, list) and all(isinstance(entry, dict) and "name" in entry for entry in listed), listed
    assert set(names) <= {entry["name"] for entry in listed}, listed


@bounded(20)
def test_inspect_coverage_counts_each_rule_outcome_for_admins_only(rules_server, ns, secured):
    expect_ok(secured.get("/users/carol", {"auth": token("carol")}), None)
    expect_error(secured.get("/users/carol", {"auth": token("dave")}), 401, DENIED)
    expect_error(request(rules_server.port, "GET", url("/.inspect/coverage.json", {"ns": ns})), 401, DENIED, cors=False)
    expect_error(request(rules_server.port, "GET", url("/.inspect/coverage.json", {"ns": ns, "auth": token("carol")})),
                 401, DENIED, cors=False)
    response = expect_ok(request(rules_server.port, "GET", url("/.inspect/coverage.json", {"ns": ns}), headers=ADMIN),
                         cors=False)
    rules = {(entry["path"], entry["kind"]): entry for entry in response.json()}
    read = rules[("/users/$uid/.read", ".read")]
    assert read["expression"] == "auth != null && auth.uid == $uid", read
    assert read["true"] >= 1 and read["false"] >= 1 and read["error"] == 0, read
    assert isinstance(read["line"], int) and isinstance(read["column"], int), read


# ---------------------------------------------------------------------------------------------------------------
# Connections


@bounded(20)
def test_one_keep_alive_connection_serves_many_requests(server, ns):
    with HttpConnection(server.port) as connection:
        for index in range(50):
            expect_ok(connection.request("PUT", url("/ka.json", {"ns": ns}), json.dumps(index)), index)
            response = expect_ok(connection.request("GET", url("/ka.json", {"ns": ns})), index)
            assert (response.header("Connection") or "").lower() != "close", response.describe()
        expect_error(connection.request("GET", url("/ka.json", {"ns": ns, "orderBy": "x"})), 400, ORDER_BY_NOT_JSON)
        expect_ok(connection.request("DELETE", url("/ka.json", {"ns": ns})), None)
        assert connection.is_open()


@bounded(20)
def test_pipelined_requests_are_answered_in_order(server, ns):
    host = f"127.0.0.1:{server.port}"
    batch = b""
    for index in range(20):
        batch += build_request("PUT", url(f"/pl/k{index % 3}.json", {"ns": ns}), json.dumps(index), host=host)
        batch += build_request("GET", url(f"/pl/k{index % 3}.json", {"ns": ns}), host=host)
    batch += build_request("GET", url("/pl.json", {"ns": ns, "limitToFirst": "x"}), host=host)
    batch += build_request("GET", url("/pl.json", {"ns": ns}), host=host)
    with HttpConnection(server.port) as connection:
        connection.send_raw(batch)
        for index in range(20):
            expect_ok(connection.read_response("PUT"), index)
            expect_ok(connection.read_response("GET"), index)
        expect_error(connection.read_response(), 400, ORDER_BY_MISSING)
        expect_ok(connection.read_response(), {"k0": 18, "k1": 19, "k2": 17})
        # The same, one byte at a time.
        for offset in range(len(batch[:600])):
            connection.send_raw(batch[offset:offset + 1])
        expect_ok(connection.read_response("PUT"), 0)


@pytest.mark.parametrize("garbage", [
    b"\x00\x01\x02\xff" * 64 + b"\r\n\r\n",
    b"GET /x.json HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n",
    b"PUT /x.json HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    b"GET " + b"/a" * 10000 + b".json HTTP/1.1\r\n\r\n",
    b"GET /x.json HTTP/1.1\r\n" + b"X-Long: " + b"v" * 70000 + b"\r\n\r\n",
    b"PUT /x.json HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"GET /x.json HTTP/9.9\r\n\r\n",
], ids=["binary", "negative-length", "length-and-chunked", "long-target", "long-header", "bad-chunk", "version"])
@bounded(30)
def test_the_server_keeps_serving_others_after_garbage(server, ns, garbage):
    with HttpConnection(server.port) as neighbour, HttpConnection(server.port) as attacker:
        expect_ok(neighbour.request("PUT", url("/n.json", {"ns": ns}), "1"), 1)
        try:
            attacker.send_raw(garbage)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            response = attacker.read_response()
            assert 400 <= response.status < 600, response.describe()
        except (ConnectionEnded, socket.timeout):
            pass
        expect_ok(neighbour.request("PUT", url("/n.json", {"ns": ns}), "2"), 2)
        expect_ok(neighbour.request("GET", url("/n.json", {"ns": ns})), 2)
    expect_ok(request(server.port, "GET", url("/n.json", {"ns": ns})), 2)
    assert server.alive()


@bounded(20)
def test_error_and_success_answers_use_json_content_type(rest):
    assert rest.put("/ct", {"a": 1}).header("Content-Type") == JSON_CONTENT_TYPE
    assert rest.get("/ct", {"orderBy": "a"}).header("Content-Type") == JSON_CONTENT_TYPE
    assert rest.call("GET", "/ct", raw="shallow=true&orderBy=%22a%22").header("Content-Type") == JSON_CONTENT_TYPE

