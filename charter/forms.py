"""Input parsing only: the business-case pages' form posts turned into the same payloads the
JSON API takes (spec field names). Every rule is applied by the services."""

import re
from typing import Any

from django.http import QueryDict

from charter import finance
from charter.specs import ACT_SPECS, ADOPTION_FORM, THESIS_FORM, KpiSpec, form_fields
from governance import specs

THESIS_FIELDS = form_fields(THESIS_FORM)
ADOPTION_FIELDS = form_fields(ADOPTION_FORM)
NOTE_ROWS = 3  # blank note rows offered by the return forms


def thesis(post: QueryDict) -> dict[str, Any]:
    data: dict[str, Any] = {key: post.get(key, "") for key in THESIS_FIELDS}
    data["designPrinciples"] = post.get("designPrinciples", "").splitlines()
    return data


def adoption(post: QueryDict) -> dict[str, Any]:
    return {key: post.get(key, "") for key in ADOPTION_FIELDS}


LINE_ERROR = re.compile(r"financialCase\.builtin\.lines\[(\d+)\]\.(year|cost|benefit)")


def financial_errors(
    errors: dict[str, list[str]], data: dict[str, Any]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """The financial case's refusals as its form shows them: a yearly line's by the input it
    came from (`line-<year>-cost`: the lines sent are only the filled years, so their index is
    not the year), with its words ("Cost in year 3"; a year refused, such as one past the
    horizon, "Year 5"); the others as they are. Returns the errors and those words by key."""
    lines = data["financialCase"]["builtin"]["lines"]
    shown: dict[str, list[str]] = {}
    words: dict[str, str] = {}
    for key, messages in errors.items():
        match = LINE_ERROR.fullmatch(key)
        if match is None:
            shown.setdefault(key, []).extend(messages)
            continue
        index, part = int(match[1]), match[2]
        year = lines[index]["year"]
        field = f"line-{year}-{part}"
        shown.setdefault(field, []).extend(messages)
        words[field] = f"Year {year}" if part == "year" else f"{part.capitalize()} in year {year}"
    return shown, words


def financial(post: QueryDict) -> dict[str, Any]:
    """The financial-case form: mode, the builtin model (one row per year), the attached
    model's headline figures and the board paper."""
    lines = []
    for year in range(finance.HORIZON_MAX + 1):
        cost = post.get(f"line-{year}-cost", "").strip()
        benefit = post.get(f"line-{year}-benefit", "").strip()
        if cost or benefit:
            lines.append({"year": year, "cost": cost, "benefit": benefit})
    attached = {key: post.get(f"attached-{key}", "") for key in finance.HEADLINE_FIGURES}
    attached.update(
        {
            "label": post.get("attached-label", ""),
            "url": post.get("attached-url", ""),
            "pageId": post.get("attached-pageId", ""),
        }
    )
    return {
        "financialCase": {
            "mode": post.get("mode", ""),
            "builtin": {
                "currency": post.get("currency", ""),
                "discountRatePct": post.get("discountRatePct", ""),
                "horizonYears": post.get("horizonYears", ""),
                "lines": lines,
            },
            "attached": attached,
            "boardPaperPageId": post.get("boardPaperPageId", "") or None,
        }
    }


def seat(post: QueryDict) -> object:
    """A seat from the picker: a tracker accountId, an external person, or empty (clear)."""
    if post.get("account_id"):
        return post["account_id"]
    if post.get("displayName") or post.get("email"):
        return {"displayName": post.get("displayName", ""), "email": post.get("email", "")}
    return None


def steering_member(post: QueryDict) -> dict[str, Any]:
    """A steering committee member from the picker (a tracker accountId) or from the external
    person form ({displayName, email}), with a role."""
    role = post.get("role", "")
    if post.get("account_id"):
        return {"accountId": post["account_id"], "role": role}
    return {
        "displayName": post.get("displayName", ""),
        "email": post.get("email", ""),
        "role": role,
    }


def notes(post: QueryDict) -> list[dict[str, Any]]:
    """The note rows of a return form; rows whose ask is blank are skipped."""
    rows = []
    for index in range(NOTE_ROWS):
        ask = post.get(f"note-{index}-ask", "")
        if ask.strip():
            rows.append(
                {
                    "section": post.get(f"note-{index}-section", ""),
                    "ask": ask,
                    "severity": post.get(f"note-{index}-severity", ""),
                }
            )
    return rows


def act_body(act: str, post: QueryDict) -> dict[str, Any]:
    if act in ("return", "closeout-return"):
        return {"returnNotes": notes(post)}
    if act == "reopen":
        if post.get("mode") == "cite":
            return {"changeId": post.get("changeId", "")}
        return {"summary": post.get("summary", ""), "reason": post.get("reason", "")}
    spec = ACT_SPECS.get(act)
    if spec is None:
        return {}
    if act == "kpi-resolve":  # every field, sent empty when left blank
        return {key: post.get(key, "") for key in specs.writable(KpiSpec)}
    return {key: _value(post, spec, key) for key in specs.writable(spec) if key in post}


def _value(post: QueryDict, spec: type[specs.Spec], key: str) -> object:
    """A declared field from a form post: a list field's every value, else the one text."""
    return post.getlist(key) if specs.json_kind(spec, key) == "list" else post.get(key, "")


def closeout(post: QueryDict, rows: dict[str, Any]) -> dict[str, Any]:
    """The close-out form: as-built record, one disposition select and note per register
    row, lessons, commentary. A blank disposition removes it."""

    def dispositions(prefix: str, records: list[Any]) -> dict[str, Any]:
        result = {}
        for record in records:
            value = post.get(f"{prefix}-{record.pk}", "")
            note = post.get(f"{prefix}-{record.pk}-note", "")
            result[str(record.pk)] = {"disposition": value, "note": note} if value else None
        return result

    return {
        "asBuiltOutcome": post.get("asBuiltOutcome", ""),
        "asBuiltReturn": post.get("asBuiltReturn", ""),
        "asBuiltReturnValue": post.get("asBuiltReturnValue", ""),
        "asBuiltEndDate": post.get("asBuiltEndDate", ""),
        "commentary": post.get("commentary", ""),
        "scopeDispositions": dispositions("scope", rows["workPackages"]),
        "rioDispositions": dispositions("rio", rows["risks"]),
        "pendingDispositions": {
            "decisions": dispositions("decision", rows["decisions"]),
            "changes": dispositions("change", rows["changes"]),
        },
        "lessons": {
            "worked": post.get("lessons-worked", ""),
            "differently": post.get("lessons-differently", ""),
            "nextSponsor": post.get("lessons-nextSponsor", ""),
        },
    }


def minutes(post: QueryDict) -> dict[str, Any]:
    data: dict[str, Any] = {
        "title": post.get("title", ""),
        "heldOn": post.get("heldOn", ""),
        "attendees": post.getlist("attendees"),
    }
    if post.get("source") == "template":
        data["createFromTemplate"] = True
    else:
        data["url"] = post.get("url", "")
    return data
