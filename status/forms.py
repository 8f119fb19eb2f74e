"""Input parsing of the status forms: POST fields to the API's camelCase keys. Only the fields
present in the form are sent, so a partial form never clears what it does not show. No rule
lives here; the services validate. What a person types is read here before that: numbers
the page cannot read and an override without its commentary line are refused next to the
field instead of being dropped or saved silently. Reason lines keep the spec's clamp."""

from typing import Any

from django.http import QueryDict

from governance import specs
from governance.pageinput import check_numbers
from status.specs import COMMENTARY_KEYS, FORM_FIELDS, NULL_WHEN_EMPTY, ExceptionReportSpec

# The dimensions whose override carries a commentary line (the risk override has none).
REASONED_OVERRIDES = {"cost": "Cost", "schedule": "Schedule", "scope": "Scope"}


def status_data(post: QueryDict) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The status PATCH body a form submitted, and its number errors. Project metrics are the
    API's (free JSON kept as given): the page neither shows nor takes them."""
    data: dict[str, Any] = {}
    errors: dict[str, list[str]] = {}
    for name in FORM_FIELDS:
        if name in post:
            value = post.get(name, "")
            data[name] = None if name in NULL_WHEN_EMPTY and value == "" else value
    if any(key in post for key in COMMENTARY_KEYS):
        data["structuredCommentary"] = {key: post.get(key, "") for key in COMMENTARY_KEYS}
    check_numbers(data, errors, amounts=("revisedForecast",))
    for key, label in REASONED_OVERRIDES.items():
        override, reason = f"{key}RagOverride", f"{key}RagOverrideReason"
        if data.get(override) and reason in data and not str(data[reason]).strip():
            errors.setdefault(reason, []).append(
                f"Say in one line why the {label.lower()} RAG is overridden, "
                "or set the override back to “Use derived”."
            )
    return data, errors


def report_data(post: QueryDict, *, creating: bool = False) -> dict[str, Any]:
    """A new report's empty title takes the default (today's date); an edit must keep one."""
    data = {name: post.get(name, "") for name in ("title", "keyMessages") if name in post}
    if creating and not data.get("title", "").strip():
        data.pop("title", None)
    return data


def exception_report_data(post: QueryDict) -> dict[str, Any]:
    """The exception report form: every declared field as typed, a list field (the options)
    one entry a line, blank lines dropped."""
    data: dict[str, Any] = {}
    for key in specs.writable(ExceptionReportSpec):
        raw = post.get(key, "")
        if specs.json_kind(ExceptionReportSpec, key) == "list":
            data[key] = [line.strip() for line in raw.splitlines() if line.strip()]
        else:
            data[key] = raw
    return data


def exception_report_form(report: dict[str, Any]) -> dict[str, str]:
    """A stored report's fields as the form shows them (the options one a line)."""
    form = {}
    for key in specs.writable(ExceptionReportSpec):
        value = report.get(key)
        if isinstance(value, list):
            value = "\n".join(value)
        form[key] = "" if value is None else value
    return form
