"""The `no_index` warning (wire-protocol.md §6.6): a query ordered by a child or by value that the rules file does
not index gets `{"w":["no_index"]}` in its listen `ok`; the data is filtered on the server either way."""

import json

from conftest import Clients

RULES = {
    "rules": {
        ".read": True,
        ".write": True,
        "scores": {".indexOn": ["points", "meta/rank"]},
        "rooms": {"$room": {"messages": {".indexOn": "ts"}}},
        "values": {".indexOn": ".value"},
    }
}


def write_rules(tmp_path) -> str:
    path = tmp_path / "database.rules.json"
    path.write_text(json.dumps(RULES))
    return str(path)


async def test_declared_indexes_get_a_plain_ok_and_undeclared_ones_warn(start_server, tmp_path):
    server = start_server("--rules", write_rules(tmp_path))
    async with Clients(server.port) as clients:
        client = await clients.connect("indexes")
        await client.put("/scores", {"a": {"points": 3, "meta": {"rank": 2}}, "b": {"points": 9, "meta": {"rank": 1}}})
        cases = [
            ("/scores", {"i": "points", "l": 1, "vf": "r"}, {}, {"b": {"points": 9, "meta": {"rank": 1}}}),
            ("/scores", {"i": "meta/rank", "l": 1, "vf": "l"}, {}, {"b": {"points": 9, "meta": {"rank": 1}}}),
            ("/scores", {"i": "age", "l": 1, "vf": "l"}, {"w": ["no_index"]}, None),
            ("/rooms/r1/messages", {"i": "ts", "l": 5, "vf": "r"}, {}, None),
            ("/rooms/r1/messages", {"i": "author", "l": 5, "vf": "r"}, {"w": ["no_index"]}, None),
            ("/values", {"i": ".value", "l": 2, "vf": "l"}, {}, None),
            ("/other", {"i": ".value", "l": 2, "vf": "l"}, {"w": ["no_index"]}, None),
            ("/other", {"i": ".key", "l": 2, "vf": "l"}, {}, None),
            ("/other", {"l": 2, "vf": "l"}, {}, None),
        ]
        for tag, (path, query, expected_ok, expected_data) in enumerate(cases, start=1):
            view, response = await client.listen(path, query, tag=tag)
            assert response.ok and response.data == expected_ok, (path, query, response.data)
            if expected_data is not None:
                assert view.cache == expected_data, (path, query, view.cache)


async def test_without_a_rules_file_child_queries_warn_and_default_listens_do_not(server, ns):
    async with Clients(server.port) as clients:
        client = await clients.connect(ns)
        _, response = await client.listen("/scores", {"i": "points", "l": 1, "vf": "r"}, tag=1)
        assert response.ok and response.data == {"w": ["no_index"]}
        _, response = await client.listen("/scores")
        assert response.ok and response.data == {}
