"""`canopy rules check` and `canopy rules test` run as an operator would: on the rules corpus and on broken input."""

import json
import subprocess

import pytest

from conftest import REPO_ROOT, canopy_binary

FIXTURES = REPO_ROOT / "Tests" / "RulesTests" / "Fixtures"


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(canopy_binary()), "rules", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("cases", sorted(FIXTURES.glob("*.json")), ids=lambda path: path.stem)
def test_every_corpus_file_passes_with_its_embedded_rules(cases):
    result = run("test", str(cases))
    assert result.returncode == 0, result.stdout + result.stderr
    assert " cases passed" in result.stdout and "FAIL" not in result.stdout


def test_a_rules_file_and_a_separate_cases_file(tmp_path):
    rules = tmp_path / "database.rules.json"
    rules.write_text('{"rules": {"posts": {"$id": {".read": true, ".write": "auth != null"}}}}')
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"cases": [
        {"name": "anyone reads", "operation": "read", "path": "/posts/p1", "expected": "allow"},
        {"name": "signed-in writes", "operation": "set", "path": "/posts/p1", "value": 1,
         "auth": {"uid": "a"}, "expected": "allow"},
        {"name": "signed-out writes", "operation": "set", "path": "/posts/p1", "value": 1, "expected": "deny"},
    ]}))
    result = run("test", str(rules), str(cases))
    assert result.returncode == 0, result.stdout
    assert "3 of 3 cases passed" in result.stdout
    assert "2 of 2 rule expressions evaluated" in result.stdout


def test_a_case_with_the_wrong_expectation_fails_the_run_and_is_explained(tmp_path):
    rules = tmp_path / "database.rules.json"
    rules.write_text('{"rules": {".write": "auth.uid == \'admin\'"}}')
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps({"cases": [
        {"name": "wrongly expected", "operation": "set", "path": "/x", "value": 1, "expected": "allow"}]}))
    result = run("test", "--explain", str(rules), str(cases))
    assert result.returncode == 1
    assert "| FAIL | allow | deny | wrongly expected |" in result.stdout
    assert "auth.uid == 'admin'" in result.stdout


def test_check_reports_errors_with_file_line_and_column(tmp_path):
    rules = tmp_path / "bad.rules.json"
    rules.write_text('{\n  "rules": {\n    ".read": "auth.uid ==",\n    ".write": "nobody.here"\n  }\n}')
    result = run("check", str(rules))
    assert result.returncode == 1
    assert f"{rules}:3:" in result.stdout and f"{rules}:4:" in result.stdout, result.stdout


def test_check_accepts_a_valid_file():
    result = run("check", str(FIXTURES / "Rules" / "chat.rules.json"))
    assert result.returncode == 0, result.stdout
    assert "OK" in result.stdout
