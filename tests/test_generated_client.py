"""A client generated from the served OpenAPI document takes it whole: openapi-python-client
(dev extras) generates one function per operation without a warning, and the generated client
works against the running app: a typed list, a create, a PATCH with If-Match of its ETag, and a
stale PATCH answering 412 parsed as the generated Error model with the app's message."""

import importlib
import json
import subprocess
import sys
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client

from governance.errors import Stale
from governance.services import token_create
from tests.factories import RiskFactory

PACKAGE = "governance_client"


def _operation_ids(document: dict) -> list[str]:
    return [op["operationId"] for item in document["paths"].values() for op in item.values()]


@pytest.fixture(scope="module")
def generated(tmp_path_factory, django_db_setup, django_db_blocker):
    """The document as /api/v1/openapi.json serves it, and the package generated from it."""
    with django_db_blocker.unblock():
        served = Client().get("/api/v1/openapi.json")
    assert served.status_code == 200
    document = served.json()
    folder = tmp_path_factory.mktemp("client")
    (folder / "openapi.json").write_text(json.dumps(document))
    # No post hooks: the formatter is not needed to import the code, and it is slow.
    (folder / "config.yml").write_text("post_hooks: []\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "openapi_python_client",
            "generate",
            "--path",
            str(folder / "openapi.json"),
            "--output-path",
            str(folder / PACKAGE),
            "--config",
            str(folder / "config.yml"),
            "--meta",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return document, folder, result


def test_the_generator_takes_every_operation_without_a_warning(generated):
    document, folder, result = generated
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "warning" not in output.lower(), output
    modules = [
        path
        for path in (folder / PACKAGE / "api").glob("*/*.py")
        if path.name != "__init__.py" and "def sync_detailed(" in path.read_text()
    ]
    operations = _operation_ids(document)
    assert len(modules) == len(operations) > 90
    assert {path.stem for path in modules} == set(operations)


@pytest.fixture
def client_package(generated):
    _document, folder, result = generated
    assert result.returncode == 0, result.stdout + result.stderr
    sys.path.insert(0, str(folder))
    try:
        yield importlib.import_module(PACKAGE)
    finally:
        sys.path.remove(str(folder))
        for name in [m for m in sys.modules if m == PACKAGE or m.startswith(f"{PACKAGE}.")]:
            del sys.modules[name]


def test_the_generated_client_lists_creates_and_patches_with_if_match(
    client_package, live_server, cast
):
    registers = importlib.import_module(f"{PACKAGE}.api.registers")
    models = importlib.import_module(f"{PACKAGE}.models")
    _, token = token_create(user=cast.lead, name="generated client")
    client = client_package.AuthenticatedClient(base_url=live_server.url, token=token)

    def operation(name):
        return importlib.import_module(f"{registers.__name__}.registers_api_{name}")

    listed = operation("work_package_list").sync_detailed(key="ALPHA", client=client)
    assert listed.status_code == 200
    assert isinstance(listed.parsed, models.WorkPackagePage)
    assert listed.parsed.items == [] and listed.parsed.next_ is None

    created = operation("work_package_create").sync_detailed(
        key="ALPHA",
        client=client,
        body=models.RegistersApiWorkPackageCreateBody(name="Site survey", budget=1200),
    )
    assert created.status_code == 201, created.content
    package = created.parsed
    assert isinstance(package, models.WorkPackage)
    assert package.name == "Site survey" and package.revision == 1
    # Compressed answers carry the weak form (W/"1"); If-Match takes either.
    assert created.headers["ETag"].removeprefix("W/") == '"1"'

    listed = operation("work_package_list").sync_detailed(key="ALPHA", client=client)
    assert [type(p) for p in listed.parsed.items] == [models.WorkPackage]
    assert listed.parsed.items[0].id == package.id
    assert listed.parsed.items[0].project_key == "ALPHA"

    update = operation("work_package_update")
    patched = update.sync_detailed(
        key="ALPHA",
        wp_id=package.id,
        client=client,
        body=models.RegistersApiWorkPackageUpdateBody(commentary="Surveyed the north site."),
        if_match=created.headers["ETag"],
    )
    assert patched.status_code == 200, patched.content
    assert isinstance(patched.parsed, models.WorkPackage)
    assert patched.parsed.commentary == "Surveyed the north site."
    assert patched.parsed.revision == 2 and patched.headers["ETag"].removeprefix("W/") == '"2"'

    stale = update.sync_detailed(
        key="ALPHA",
        wp_id=package.id,
        client=client,
        body=models.RegistersApiWorkPackageUpdateBody(commentary="Lost update."),
        if_match=created.headers["ETag"],
    )
    assert stale.status_code == 412
    assert isinstance(stale.parsed, models.Error)
    assert stale.parsed.error.code.value == "stale"
    assert stale.parsed.error.message == Stale.default_message


def test_the_generated_client_pages_a_list_by_its_next_link(client_package, live_server, cast):
    """A list answers a page and the link to the next: the client follows it by passing the
    link's `cursor` back, and sees every row once."""
    registers = importlib.import_module(f"{PACKAGE}.api.registers")
    listing = importlib.import_module(f"{registers.__name__}.registers_api_risk_list")
    for number in range(5):
        RiskFactory(project=cast.project, title=f"Risk {number}")
    _, token = token_create(user=cast.lead, name="generated client")
    client = client_package.AuthenticatedClient(base_url=live_server.url, token=token)
    seen, cursor = [], None
    for _ in range(5):
        page = listing.sync(key="ALPHA", client=client, page_size=2, cursor=cursor)
        seen.extend(risk.title for risk in page.items)
        if page.next_ is None:
            break
        cursor = parse_qs(urlsplit(page.next_).query)["cursor"][0]
    assert sorted(seen) == [f"Risk {number}" for number in range(5)]
