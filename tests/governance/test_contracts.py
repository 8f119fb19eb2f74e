"""The Atlassian contract subsets in contracts/atlassian/ parse, and every operation the index
lists is in its document (the tracker and wiki seams are shaped for these operations)."""

import json
from pathlib import Path

import pytest

CONTRACTS = Path(__file__).resolve().parents[2] / "contracts" / "atlassian"
INDEX = json.loads((CONTRACTS / "operations-index.json").read_text())


@pytest.mark.parametrize("name", INDEX["generated_from"])
def test_each_document_is_openapi_3(name):
    document = json.loads((CONTRACTS / name).read_text())
    assert document["openapi"].startswith("3.0")
    assert document["paths"]


def test_every_indexed_operation_is_in_its_document():
    documents = {
        name: json.loads((CONTRACTS / name).read_text()) for name in INDEX["generated_from"]
    }
    missing = []
    for op in INDEX["operations"]:
        paths = documents[op["spec"]]["paths"]
        operation = paths.get(op["path"], {}).get(op["method"].lower())
        if not operation or operation.get("operationId") != op["operationId"]:
            missing.append(f"{op['spec']} {op['method']} {op['path']}")
    assert missing == []
    assert len(INDEX["operations"]) == 46
