"""The business case in the JSON API: read and edit it, take its lifecycle acts, edit the
close-out and the realisation record, address return notes, and the steering minutes. Every
endpoint authorises through governance.permissions and hands the body to a service."""

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse
from ninja import Router

from charter import services
from charter.acts import ACTS
from charter.models import BusinessCase
from charter.serializers import charter_to_dict, minutes_to_dict
from charter.specs import (
    ACT_SPECS,
    LINKS_SCHEMA,
    CharterSpec,
    CloseoutSpec,
    LinkFromTemplateSpec,
    MinutesSpec,
    RealisationSpec,
    ReturnNoteSpec,
)
from governance import permissions, specs
from governance.api import (
    STRING,
    answers,
    body_schema,
    component,
    json_object,
    list_of,
    other_members,
    with_etag,
)
from governance.concurrency import honours_if_match, read_if_match
from governance.permissions import Caller
from registers.api import CHANGE
from registers.serializers import change_to_dict

router = Router(tags=["business case"])

# The business case as the API answers it (charter.serializers), from its declaration.
BUSINESS_CASE = component("BusinessCase", specs.response_schema(CharterSpec))
RETURN_NOTE = component(
    "ReturnNote",
    {
        "type": "object",
        "properties": {
            "id": STRING,
            "section": STRING,
            "ask": STRING,
            "severity": {"enum": ["Blocker", "Significant", "Minor"]},
            "addressed": {"type": "boolean"},
        },
        "required": ["id", "section", "ask", "severity", "addressed"],
    },
)
# A supporting link as the API answers it: an item of the business case's declared links.
SUPPORTING_LINK = component(
    "SupportingLink",
    {
        **LINKS_SCHEMA["items"],
        "required": ["id", "label", "url", "type", "pageId", "templateKind"],
    },
)
# Minutes as the API answers them (charter.serializers.minutes_to_dict), from their
# declaration: what the body takes but `createFromTemplate`, and the stamps.
MINUTES = component(
    "SteeringMinutes",
    specs.response_schema(
        MinutesSpec,
        [name for name in specs.fields(MinutesSpec) if name != "createFromTemplate"],
        optional=["pageId"],
    ),
)


def _base_url(request: HttpRequest) -> str:
    return request.build_absolute_uri("/")


def _charter(response: HttpResponse, case: BusinessCase, caller: Caller) -> dict[str, Any]:
    with_etag(response, case.revision)
    return charter_to_dict(case, caller=caller)


# A handler answering the business case: the request, the project's key, the response.
CaseView = Callable[[HttpRequest, str, HttpResponse], dict[str, Any]]


def _case_patch(path: str, spec: type[specs.Spec]) -> Callable[[CaseView], CaseView]:
    """A PATCH of the business case (or a part of it) at `path`, its body declared by `spec`:
    it honours If-Match and answers the case with its ETag."""

    def register(view: CaseView) -> CaseView:
        marked = answers(BUSINESS_CASE, etag=True)(honours_if_match(view))
        return router.patch(path, openapi_extra=body_schema(*specs.body(spec, creating=False)))(
            marked
        )

    return register


def _case_write(
    request: HttpRequest,
    key: str,
    response: HttpResponse,
    service: Callable[..., BusinessCase],
    **extra: Any,
) -> dict[str, Any]:
    """A business-case write of the request's JSON body against its If-Match, answered with
    the case it leaves."""
    _, caller = permissions.project_for(request, key)
    case = service(
        caller=caller,
        data=json_object(request),
        expected_revision=read_if_match(request),
        **extra,
    )
    return _charter(response, case, caller)


@router.get("/projects/{key}/charter")
@answers(BUSINESS_CASE, etag=True)
def charter_get(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """The business case. A never-saved case reads as the defaults, with a fresh empty
    builtin financial model. Carries the derived adoptionGap and registersFrozen, the
    approved versions and the acts the caller may take now."""
    project, caller = permissions.project_for(request, key)
    return _charter(response, services.current_case(project), caller)


@_case_patch("/projects/{key}/charter", CharterSpec)
def charter_patch(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """Edit thesis, adoption inputs, seats, links and financial case (Exploring or Draft;
    editors). Honours If-Match."""
    return _case_write(request, key, response, services.charter_update, base_url=_base_url(request))


def _act_endpoint(act_name: str) -> None:
    act = ACTS[act_name]

    @answers(BUSINESS_CASE, etag=True)
    @honours_if_match
    def endpoint(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
        return _case_write(request, key, response, services.charter_act, act=act_name)

    endpoint.__name__ = f"charter_{act_name.replace('-', '_')}"
    endpoint.__doc__ = (
        f"{act.label}: from {', '.join(sorted(act.from_states))}"
        f"{f' to {act.to}' if act.to else ''}; {act.who}. Honours If-Match."
    )
    router.post(
        f"/projects/{{key}}/charter/{act_name}",
        operation_id=endpoint.__name__,
        openapi_extra=body_schema(*specs.body(ACT_SPECS[act_name], creating=True))
        if act_name in ACT_SPECS
        else body_schema({}),
    )(endpoint)


for _name in ACTS:
    _act_endpoint(_name)


@router.post("/projects/{key}/changes/{change_id}/apply-to-baseline", openapi_extra=body_schema({}))
@answers(CHANGE, etag=True)
@honours_if_match
def change_apply_to_baseline(
    request: HttpRequest, key: str, change_id: str, response: HttpResponse
) -> dict[str, Any]:
    """The Project Lead applies an Approved change awaiting application that names a work
    package to that package's baseline (the business case's planBaseline and the package's
    budgetBaseline); the change reads Applied. 409 when the case has no plan baseline, the
    package has no baseline entry, or the change is in the wrong state. Honours If-Match (the
    change's revision). Answers the change."""
    _, caller = permissions.project_for(request, key)
    body = json_object(request)
    change = services.change_apply_to_baseline(
        caller=caller,
        change_id=change_id,
        expected_revision=read_if_match(request),
        other_members=other_members(body),
    )
    with_etag(response, change.revision)
    return change_to_dict(change)


@_case_patch("/projects/{key}/charter/closeout", CloseoutSpec)
def closeout_patch(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """Edit the close-out while it is open (Approved, close-out started; editors).
    Dispositions merge per id (null removes one); lessons merge per field."""
    return _case_write(request, key, response, services.closeout_update)


@_case_patch("/projects/{key}/charter/realisation", RealisationSpec)
def realisation_patch(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """While InRealisation (an editor or the sponsor): summary, 'measured by' date, owner."""
    return _case_write(request, key, response, services.realisation_update)


@router.patch(
    "/projects/{key}/charter/return-notes/{note_id}",
    openapi_extra=body_schema(*specs.body(ReturnNoteSpec, creating=True)),
)
@answers(RETURN_NOTE, etag=True)
@honours_if_match
def return_note_patch(
    request: HttpRequest, key: str, note_id: str, response: HttpResponse
) -> dict[str, Any]:
    """Mark a return note (of the business case or of the close-out) addressed or not."""
    _, caller = permissions.project_for(request, key)
    case, note = services.return_note_address(
        caller=caller,
        note_id=note_id,
        data=json_object(request),
        expected_revision=read_if_match(request),
    )
    with_etag(response, case.revision)
    return note


@router.post(
    "/projects/{key}/charter/supporting-links/from-template",
    response={201: dict},
    openapi_extra=body_schema(*specs.body(LinkFromTemplateSpec, creating=True)),
)
@answers(SUPPORTING_LINK, etag=True)
def link_from_template(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """Create a wiki page from the board paper (Exploring or Draft) or lessons (close-out)
    template, labelled, and add it to the supporting links. Returns the new link."""
    _, caller = permissions.project_for(request, key)
    body = json_object(request)
    case, link = services.link_from_template(
        caller=caller,
        template_kind=body.get("templateKind"),
        title=body.get("title"),  # the service's text rule reads null as empty, refuses {}
        base_url=_base_url(request),
        extra_fields=body.keys(),
    )
    with_etag(response, case.revision)
    response.status_code = 201
    return link


@router.get("/projects/{key}/minutes")
@answers(list_of(MINUTES))
def minutes_get(request: HttpRequest, key: str) -> list[dict[str, Any]]:
    """The project's steering committee minutes, newest meeting first."""
    project, _ = permissions.project_for(request, key)
    return [minutes_to_dict(m) for m in services.minutes_list(project)]


@router.post(
    "/projects/{key}/minutes",
    response={201: dict},
    openapi_extra=body_schema(*specs.body(MinutesSpec, creating=True)),
)
@answers(MINUTES)
def minutes_post(request: HttpRequest, key: str, response: HttpResponse) -> dict[str, Any]:
    """Record minutes (editors). The first minutes recorded set firstSteercoHeldAt and
    complete initiation."""
    _, caller = permissions.project_for(request, key)
    minutes = services.minutes_record(
        caller=caller, data=json_object(request), base_url=_base_url(request)
    )
    response.status_code = 201
    return minutes_to_dict(minutes)
