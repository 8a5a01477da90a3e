"""app/web/api/openapi.json describes every API route Herald serves: the REST fuzzer
(tests/integration/fuzz/test_rest.py) fuzzes what it describes, so a route left out is
never fuzzed (POST /api/webhooks/<id>/rotate was, when it was added)."""
import json
import re

from app.settings import ROOT

DESCRIPTION = json.loads((ROOT / "app" / "web" / "api" / "openapi.json").read_text())


def described():
    return {(method.upper(), re.sub(r"\{[^}]+\}", "{}", path))
            for path, item in DESCRIPTION["paths"].items()
            for method in item if method in ("get", "post", "put", "patch", "delete")}


def test_every_api_route_is_described(app):
    served = {(method, re.sub(r"<[^>]+>", "{}", rule.rule))
              for rule in app.url_map.iter_rules()
              if rule.rule.startswith("/api/") and rule.rule != "/api/openapi.json"
              for method in rule.methods - {"HEAD", "OPTIONS"}}
    missing = served - described()
    assert not missing, f"routes missing from openapi.json: {sorted(missing)}"


def test_every_operation_documents_the_400_any_request_may_get():
    """A request naming a host Herald does not serve is a 400 on every route but the
    health probes (ALLOWED_HOSTS); the REST fuzzer sent one to POST /api/stream-token,
    whose description had no 400."""
    missing = [(method, path) for path, item in DESCRIPTION["paths"].items()
               for method, operation in item.items()
               if method in ("get", "post", "put", "patch", "delete")
               and path not in ("/healthz", "/readyz") and "400" not in operation["responses"]]
    assert not missing, missing
