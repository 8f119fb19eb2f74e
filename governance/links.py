"""Links of the spec's supportingLinks shape {id, label, url, type, pageId?, spaceKey?,
templateKind?}, cleaned in one place for the business case's supportingLinks and the
decisions' evidenceLinks ("same shape as business-case supportingLinks"): url http or https;
type 'confluence' (a wiki page) or 'link'; a wiki link's pageId is checked against the wiki."""

import uuid
from collections.abc import Mapping
from typing import Any, Literal
from urllib.parse import urljoin

from governance.cleaning import FieldErrors, http_url, known_object, optional_text, text
from governance.wiki import TEMPLATE_KINDS, WikiError, WikiPage, get_wiki

LINK_TYPES = ["confluence", "link"]
LINK_FIELDS = {"id", "label", "url", "type", "pageId", "spaceKey", "templateKind"}
LABEL_MAX = 200
LINKS_MAX = 50
# What a stored link keeps when an edit sends it back without them (a form that shows only
# label and url must not turn a wiki link into a plain one).
KEPT_FROM_STORED = ("type", "pageId", "spaceKey", "templateKind")


def page_exists(
    page_id: str, checked: dict[str, WikiPage | None], *, project_key: str = ""
) -> WikiPage | Literal[False] | None:
    """The wiki page, None when it does not exist (or is another project's than
    `project_key`'s), False when the wiki cannot answer (then the link is kept unchecked: an
    outage must not block editing)."""
    if page_id not in checked:
        try:
            checked[page_id] = get_wiki().get_page(page_id, project_key=project_key)
        except WikiError:
            return False
    return checked[page_id]


def absolute(url: str, base_url: str) -> str:
    return urljoin(base_url, url) if base_url else url


def clean_link(
    raw: Any,
    where: str,
    errors: FieldErrors,
    *,
    known_page_ids: set[str] | None = None,
    base_url: str = "",
    checked: dict[str, Any] | None = None,
    project_key: str = "",
) -> dict[str, Any] | None:
    """One link. A wiki link ('confluence') with a pageId not already known is checked
    against the wiki and takes its URL and title from the page when they are not given."""
    checked = {} if checked is None else checked
    if isinstance(raw, str):
        raw = {"url": raw}
    if not known_object(raw, LINK_FIELDS, errors, where, "label, url, type"):
        return None
    link_type = raw.get("type") or "link"
    if not isinstance(link_type, str) or link_type not in LINK_TYPES:
        errors.add(f"{where}.type", f"Must be one of: {', '.join(LINK_TYPES)}.")
        return None
    link_id = raw.get("id") or str(uuid.uuid4())
    if not isinstance(link_id, str) or len(link_id) > 64:
        errors.add(f"{where}.id", "Must be a short text id.")
        return None
    label, error = text(raw.get("label"), max_length=LABEL_MAX)
    if error:
        errors.add(f"{where}.label", error)
    page_id, error = optional_text(raw.get("pageId"), max_length=64)
    if error:
        errors.add(f"{where}.pageId", error)
    space_key, error = optional_text(raw.get("spaceKey"), max_length=64)
    if error:
        errors.add(f"{where}.spaceKey", error)
    template_kind = raw.get("templateKind") or None
    if template_kind is not None and (
        not isinstance(template_kind, str) or template_kind not in TEMPLATE_KINDS
    ):
        errors.add(f"{where}.templateKind", f"Must be one of: {', '.join(TEMPLATE_KINDS)}.")
    if page_id and link_type != "confluence":
        errors.add(f"{where}.pageId", "Only wiki links ('confluence') carry a pageId.")
    url = raw.get("url")
    no_page = False
    if page_id and link_type == "confluence" and page_id not in (known_page_ids or set()):
        page = page_exists(page_id, checked, project_key=project_key)
        if page is None:
            errors.add(f"{where}.pageId", f"No wiki page with id {page_id}.")
            no_page = True
        elif page:
            url = url or absolute(page.url, base_url)
            label = label or page.title
            space_key = space_key or page.space_key or None
    url, error = http_url(url)
    given = raw.get("url")
    blank = given is None or (isinstance(given, str) and not given.strip())
    if error and not (no_page and blank):  # the page would have given it
        errors.add(f"{where}.url", error)
    link = {"id": link_id, "label": label or url, "url": url, "type": link_type}
    if page_id:
        link["pageId"] = page_id
    if space_key:
        link["spaceKey"] = space_key
    if template_kind:
        link["templateKind"] = template_kind
    return link


def clean_links(
    raw: Any,
    field: str,
    errors: FieldErrors,
    *,
    stored: list[dict[str, Any]] | None = None,
    base_url: str = "",
    project_key: str = "",
) -> list[dict[str, Any]] | None:
    """A whole list of links. An entry that matches a stored link (by id, else by url) keeps
    that link's id and the wiki fields it omits. Returns None (each offending entry named)
    when the list cannot be taken."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        errors.add(field, "Must be a list of links {label, url, type}.")
        return None
    if len(raw) > LINKS_MAX:
        errors.add(field, f"At most {LINKS_MAX} links (this has {len(raw)}).")
        return None
    stored = [link for link in stored or [] if isinstance(link, Mapping)]
    by_id = {link.get("id"): link for link in stored if link.get("id")}
    by_url = {link.get("url"): link for link in stored if link.get("url")}
    known: set[str] = {page for link in stored if (page := link.get("pageId"))}
    before = len(errors)
    checked: dict[str, Any] = {}
    links, ids = [], set()
    for index, item in enumerate(raw):
        if isinstance(item, str):
            item = {"url": item}
        if isinstance(item, Mapping):
            link_id, url = item.get("id"), item.get("url")
            match = (by_id.get(link_id) if isinstance(link_id, str) else None) or (
                by_url.get(url) if isinstance(url, str) else None
            )
            if match is not None:
                inherited = {k: match[k] for k in KEPT_FROM_STORED if k in match and k not in item}
                item = {"id": match.get("id"), **inherited, **item}
        where = f"{field}[{index}]"
        link = clean_link(
            item,
            where,
            errors,
            known_page_ids=known,
            base_url=base_url,
            checked=checked,
            project_key=project_key,
        )
        if link is None:
            continue
        if link["id"] in ids:
            errors.add(f"{where}.id", "This id appears twice.")
            continue
        ids.add(link["id"])
        links.append(link)
    return links if len(errors) == before else None
