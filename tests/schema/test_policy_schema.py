# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""docs/policy.schema.json and bfbpf's policy parser agree on accept and reject.

    /usr/bin/python3 -m pytest tests/schema        # part of `make check`: no root

Every policy of the fuzz corpus (tests/fuzz/corpus/policy: a *.json file is a
policy, a *.txt file one entry, tried in allowed_hosts and in model_endpoints),
every policy written out in docs/*.md and the READMEs, and the cases below go through both:

- the schema, with Python's jsonschema (Debian's python3-jsonschema); a file
  that repeats a key is refused before it, as the parser and every editor
  refuse it (JSON Schema sees the document after the JSON parser kept one of
  the two values);
- the parser, through `bfbpf resolve --policy FILE` (the CLI's dry run: it
  parses the policy exactly as attach does, needs no root, and exits 2 on an
  invalid policy); its upstream is 127.0.0.1:1, where nothing listens, so no
  name is looked up anywhere.

Where the schema cannot express a rule, KNOWN_DISAGREEMENTS names the case and
why (docs/policy.md, "The JSON Schema"); the test requires that they still
disagree, so the list cannot go stale. Environment: BFBPF (default
build/bfbpf).
"""

from __future__ import annotations

import glob
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

import jsonschema
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA_PATH = os.path.join(ROOT, "docs", "policy.schema.json")
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus", "policy")
BFBPF = os.environ.get("BFBPF") or os.path.join(ROOT, "build", "bfbpf")

# Rules the schema cannot express; each case here must be accepted by the schema and
# refused by the parser (the test checks that it still is).
KNOWN_DISAGREEMENTS = {
    "entry:198.18.0.1/24": "host bits set after the prefix length (a regular expression cannot compute it)",
    "entry:[2001:db8::1/32]:443": "host bits set after the prefix length",
    "policy:loopback-v6-cidr": "a CIDR inside IPv6 loopback in a spelling other than ::/127",
    "policy:both-port-lists-overlap": "a port in both tls_ports and http_ports when both are given",
    "policy:port-as-float": "JSON Schema's integer includes 443.0; the parser wants an integer literal",
}

# Entries tried in allowed_hosts and in model_endpoints (docs/policy.md, "Entries").
ENTRIES = """
example.com|Example.COM.|a.b.example.com:443|*.example.com|*.example.com:8443|*.com|a.*.com|example.*
*foo.com|foo*.com|**.a.com|*.*.a.com|*|*.|under_score.example.com|a..com|.a.com|a.com..
https://example.com|1.2.3|1.2.3.256|01.2.3.4|1.2.3.com|1.2.3.4|198.18.0.0/24|198.18.0.1/24
198.18.0.1/32|0.0.0.0/0|0.0.0.0|0.0.0.0:80|0.0.0.0/32|::|[::]:80|::/0|::0|0::0|::ffff:0.0.0.0
::ffff:0:0|64:ff9b::|64:ff9b::0.0.0.0|64:ff9b::/96|64:ff9b::/64|64:ff9b::c612:0/120|::ffff:1.2.3.4
2001:db8::1|[2001:db8::1]|[2001:db8::1]:443|2001:db8::/32|[2001:db8::/32]:443|2001:db8::1:443
[2001:db8::1/32]:443|[198.18.0.1]:80|example.com:0|example.com:65536|example.com:|example.com:+1
example.com:0443|example.com:65535|1:2:3:4:5:6:7:8|1:2:3:4:5:6:7::|1::2:3:4:5:6:7|1:2:3:4:5:6:1.2.3.4
::1.2.3.4|fe80::1%eth0|2001:DB8::1|1:2:3:4:5:6:7:8:9|1::2::3|12345::|127.0.0.1:4000|127.0.0.0/8
[::1]:4000|::/127|a-.com|-a.com|a-b.com|1-2|1-2.3|xn--bcher-kva.example|localhost|example.com/24
1.2.3.4/33|2001:db8::/129|1.2.3.4/08| example.com|example.com |\u00e9xample.com|example.com:443:1
""".split("|")
ENTRIES = [e.strip("\n") for e in "|".join(ENTRIES).replace("\n", "|").split("|") if e.strip("\n")]
ENTRIES += [
    "a" * 63 + ".com",
    "a" * 64 + ".com",
    ".".join(["a" * 49] * 5) + ".bbb",  # 253 characters
    ".".join(["a" * 49] * 5) + ".bbbb",  # 254
    ".".join(["a" * 49] * 5) + ".bbb.",  # 253 and the trailing dot
    "*." + ".".join(["a" * 49] * 5) + ".bbb",
    "a." * 149 + "com",  # 301 characters
]

# Policies: the document's rules besides the entries.
POLICIES: Dict[str, Any] = {
    "empty": {},
    "not-an-object": ["network_mode", "public"],
    "mode-case": {"network_mode": "Allowlist"},
    "mode-null": {"network_mode": None},
    "legacy-true": {"allow_internet": True},
    "legacy-true-public": {"allow_internet": True, "network_mode": "public"},
    "legacy-false-no-network": {"allow_internet": False, "network_mode": "no-network"},
    "legacy-false-allowlist": {"allow_internet": False, "network_mode": "allowlist"},
    "legacy-string": {"allow_internet": "true"},
    "legacy-hosts": {"allow_internet": False, "allowed_hosts": ["a.com"]},
    "legacy-empty-hosts": {"allow_internet": True, "allowed_hosts": []},
    "hosts-no-network": {"network_mode": "no-network", "allowed_hosts": ["a.com"]},
    "hosts-public": {"network_mode": "public", "allowed_hosts": ["a.com"]},
    "hosts-empty-public": {"network_mode": "public", "allowed_hosts": []},
    "hosts-null": {"network_mode": "allowlist", "allowed_hosts": None},
    "hosts-not-strings": {"network_mode": "allowlist", "allowed_hosts": [1]},
    "hosts-string": {"network_mode": "allowlist", "allowed_hosts": "a.com"},
    "lane-closed": {"network_mode": "no-network", "allow_model_endpoint": False, "model_endpoints": ["m.example:1"]},
    "lane-bool-string": {"network_mode": "no-network", "allow_model_endpoint": "false"},
    "loopback-off-exact": {
        "network_mode": "no-network",
        "allow_loopback": False,
        "model_endpoints": ["127.0.0.1:4000", "[::1]:4000"],
    },
    "loopback-off-cidr": {"network_mode": "allowlist", "allow_loopback": False, "allowed_hosts": ["127.0.0.0/8"]},
    "loopback-off-cidr-port": {
        "network_mode": "allowlist",
        "allow_loopback": False,
        "allowed_hosts": ["127.0.0.0/24:4000"],
    },
    "loopback-off-v6-cidr": {"network_mode": "allowlist", "allow_loopback": False, "allowed_hosts": ["::/127"]},
    "loopback-v6-cidr": {"network_mode": "allowlist", "allow_loopback": False, "allowed_hosts": ["0::/127"]},
    "loopback-on-cidr": {"network_mode": "allowlist", "allow_loopback": True, "allowed_hosts": ["127.0.0.0/8"]},
    "loopback-off-world": {"network_mode": "allowlist", "allow_loopback": False, "allowed_hosts": ["0.0.0.0/0"]},
    "lane-many": {"network_mode": "no-network", "model_endpoints": [f"m{i}.example:1" for i in range(65)]},
    "unknown-key": {"network_mode": "public", "colour": "blue"},
}

# Issue 18 and 20 fields (HELPER_COMMON.md, "Agreed names"). The schema has them;
# the parser of a branch without them says `unknown key`: such a case is skipped, with
# the field named, and runs as soon as the parser knows the field (after the merge).
NEW_FIELD_POLICIES: Dict[str, Any] = {
    "runtime_network": {"network_mode": "allowlist", "allowed_hosts": ["a.com"], "runtime_network": True},
    "runtime_network-false-public": {"network_mode": "public", "runtime_network": False},
    "runtime_network-no-network": {"network_mode": "no-network", "runtime_network": True},
    "runtime_network-string": {"network_mode": "allowlist", "runtime_network": "yes"},
    "sni-off": {"network_mode": "allowlist", "sni": "off"},
    "sni-enforce-no-network": {"network_mode": "no-network", "sni": "enforce"},
    "sni-public": {"network_mode": "public", "sni": "off"},
    "sni-legacy-public": {"allow_internet": True, "sni": "enforce"},
    "sni-bad": {"network_mode": "allowlist", "sni": "strict"},
    "ports": {"network_mode": "allowlist", "tls_ports": [443, 8443], "http_ports": [80, 8080]},
    "ports-empty": {"network_mode": "allowlist", "tls_ports": [], "http_ports": []},
    "ports-twice": {"network_mode": "allowlist", "tls_ports": [443, 443]},
    "ports-zero": {"network_mode": "allowlist", "http_ports": [0]},
    "ports-high": {"network_mode": "allowlist", "http_ports": [65536]},
    "ports-string": {"network_mode": "allowlist", "tls_ports": ["443"]},
    "ports-many": {"network_mode": "allowlist", "tls_ports": list(range(1000, 1017))},
    "ports-tls-80-default-http": {"network_mode": "allowlist", "tls_ports": [80]},
    "ports-http-443-default-tls": {"network_mode": "allowlist", "http_ports": [443]},
    "both-port-lists-overlap": {"network_mode": "allowlist", "tls_ports": [8443], "http_ports": [8443]},
    "port-as-float": {"network_mode": "allowlist", "tls_ports": [443.0]},
    "ports-public": {"network_mode": "public", "http_ports": [80]},
}
NEW_FIELDS = ("runtime_network", "sni", "tls_ports", "http_ports")


def _validator() -> jsonschema.protocols.Validator:
    with open(SCHEMA_PATH, encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema)


VALIDATOR = _validator()


class DuplicateKey(ValueError):
    pass


def _strict_object(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKey(key)
        out[key] = value
    return out


def schema_accepts(text: str) -> Tuple[bool, str]:
    try:
        document = json.loads(text, object_pairs_hook=_strict_object)
    except ValueError as e:  # DuplicateKey too
        return False, f"not JSON the schema can judge: {e}"
    errors = sorted(VALIDATOR.iter_errors(document), key=lambda e: list(e.path))
    return (not errors), "; ".join(e.message[:160] for e in errors[:3])


def parser_accepts(text: str) -> Tuple[bool, str]:
    if not os.access(BFBPF, os.X_OK):
        pytest.fail(f"{BFBPF} is missing (make builds it)")
    with tempfile.NamedTemporaryFile("w", suffix=".json", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        done = subprocess.run(
            [BFBPF, "resolve", "--policy", f.name, "--dns-server", "127.0.0.1:1", "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    if done.returncode not in (0, 2):
        pytest.fail(f"bfbpf resolve exited {done.returncode}: {done.stderr.strip()}")
    return done.returncode == 0, done.stderr.strip()


def check_agreement(case: str, text: str) -> None:
    schema_ok, schema_why = schema_accepts(text)
    parser_ok, parser_why = parser_accepts(text)
    if case in KNOWN_DISAGREEMENTS:
        assert (schema_ok, parser_ok) == (True, False), (
            f"{case} is listed as a known disagreement ({KNOWN_DISAGREEMENTS[case]}) but the schema "
            f"{'accepts' if schema_ok else 'refuses'} it and the parser {'accepts' if parser_ok else 'refuses'} it: "
            "update KNOWN_DISAGREEMENTS and docs/policy.md"
        )
        return
    assert schema_ok == parser_ok, (
        f"{case}: the schema {'accepts' if schema_ok else 'refuses'} it ({schema_why or 'valid'}), "
        f"the parser {'accepts' if parser_ok else 'refuses'} it ({parser_why or 'valid'})\n{text}"
    )


def corpus_cases() -> List[Tuple[str, str]]:
    cases = []
    for path in sorted(glob.glob(os.path.join(CORPUS, "*"))):
        name = os.path.basename(path)
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            text = f.read()
        if name.endswith(".txt"):
            entry = text.rstrip("\n")
            for key in ("allowed_hosts", "model_endpoints"):
                cases.append((f"corpus:{name}:{key}", json.dumps({"network_mode": "allowlist", key: [entry]})))
        else:
            cases.append((f"corpus:{name}", text))
    return cases


def docs_cases() -> List[Tuple[str, str]]:
    """Every policy written out in docs/*.md and the READMEs: ```json blocks and `{...}`
    spans that are JSON objects with a network_mode or allow_internet key."""
    cases = []
    pages = sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    pages += [os.path.join(ROOT, "README.md"), os.path.join(ROOT, "clients", "python", "README.md")]
    for path in pages:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        found = re.findall(r"```json\n(.*?)```", text, re.S) + re.findall(r"`(\{[^`\n]*\})`", text)
        for i, snippet in enumerate(found):
            try:
                document = json.loads(snippet)
            except ValueError:
                continue
            if isinstance(document, dict) and ({"network_mode", "allow_internet"} & set(document)):
                cases.append((f"docs:{os.path.basename(path)}:{i}", snippet))
    return cases


def test_schema_is_generated() -> None:
    """docs/policy.schema.json is what tools/policy-schema.py writes (its source)."""
    done = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "policy-schema.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_corpus_is_not_empty() -> None:
    assert len(corpus_cases()) >= 10 and len(docs_cases()) >= 3


@pytest.mark.parametrize("case, text", corpus_cases() + docs_cases(), ids=lambda v: v if ":" in str(v) else "")
def test_corpus_and_docs(case: str, text: str) -> None:
    check_agreement(case, text)


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("key", ["allowed_hosts", "model_endpoints"])
def test_entry(key: str, entry: str) -> None:
    case = f"entry:{entry}" if key == "allowed_hosts" else f"lane:{entry}"
    check_agreement(case, json.dumps({"network_mode": "allowlist", key: [entry]}))


@pytest.mark.parametrize("case", sorted(POLICIES))
def test_policy(case: str) -> None:
    check_agreement(f"policy:{case}", json.dumps(POLICIES[case]))


def test_duplicate_key() -> None:
    check_agreement("policy:duplicate", '{"network_mode": "public", "network_mode": "allowlist"}')


def _parser_lacks(policy: Dict[str, Any]) -> Optional[str]:
    ok, why = parser_accepts(json.dumps(policy))
    for field in NEW_FIELDS:
        if field in policy and not ok and f'unknown key "{field}"' in why:
            return field
    return None


@pytest.mark.parametrize("case", sorted(NEW_FIELD_POLICIES))
def test_new_field(case: str) -> None:
    policy = NEW_FIELD_POLICIES[case]
    missing = _parser_lacks(policy)
    if missing:
        pytest.skip(f"the parser of this build does not know {missing!r} yet (issue 18/20 branches not merged)")
    check_agreement(f"policy:{case}", json.dumps(policy))


def test_new_fields_in_schema() -> None:
    """Independent of the parser: the schema's own verdicts on the agreed fields."""
    accepted = {"runtime_network", "runtime_network-false-public", "sni-off", "sni-enforce-no-network", "ports"}
    accepted |= {"ports-empty", "both-port-lists-overlap", "port-as-float"}
    for case, policy in NEW_FIELD_POLICIES.items():
        ok, why = schema_accepts(json.dumps(policy))
        assert ok == (case in accepted), f"{case}: {why}"
