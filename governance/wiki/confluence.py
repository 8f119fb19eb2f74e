"""The Confluence Cloud backend (WIKI_BACKEND=confluence): the Wiki protocol over the v2 API
(pages, spaces, footer comments) and the v1 API where v2 has no equivalent (CQL search,
writing labels), exactly the operations in contracts/atlassian/confluence-*.subset.json.
Calls are made as the app's service account (ATLASSIAN_SERVICE_EMAIL and _API_TOKEN), except
the page picker's search, which runs as the reader (their OAuth token) so that it lists only
pages they may open."""

import re
import uuid
from collections.abc import Iterable
from html import escape
from typing import Any

from django.conf import settings
from django.core.cache import cache

from governance.atlassian import grants, service
from governance.atlassian.context import acting_account
from governance.atlassian.errors import AtlassianUnavailable
from governance.atlassian.http import Client, Credentials, UserCredentials, query_string
from governance.wiki.base import WikiError, WikiPage

PAGE_ID = re.compile(r"^[0-9]{1,20}$")
SPACE_KEY = re.compile(r"^[A-Za-z0-9]{1,255}$")
_CACHE = "confluence:v1:"


def storage(text: str) -> str:
    """Plain text as Confluence storage format: one paragraph per line, escaped."""
    lines = [line for line in text.splitlines()]
    return "".join(f"<p>{escape(line)}</p>" for line in lines if line.strip()) or "<p></p>"


class ConfluenceWiki:
    product = "Confluence"

    def __init__(self) -> None:
        self.http = Client(product=self.product, error_class=WikiError)

    # Where and how ----------------------------------------------------------------------
    def site(self) -> str:
        return settings.ATLASSIAN_CONFLUENCE_URL or settings.ATLASSIAN_SITE_URL

    def v2(self) -> str:
        return settings.ATLASSIAN_CONFLUENCE_V2_URL or f"{self.service().base_url}/wiki/api/v2"

    def service(self) -> Credentials:
        """The service account, on the site (classic token) or the gateway (scoped); page
        links still name the site (`site()`)."""
        return service.credentials(self.product, WikiError)

    def _page(
        self, data: dict[str, Any], *, space_key: str = "", labels: Iterable[str] = ()
    ) -> WikiPage:
        links = data.get("_links") or {}
        webui = links.get("webui") or links.get("tinyui") or ""
        base = links.get("base") or f"{self.site()}/wiki"
        url = webui if webui.startswith("http") else (base + webui if webui else "")
        return WikiPage(
            id=str(data.get("id") or ""),
            title=data.get("title") or "",
            url=url,
            space_key=space_key,
            labels=tuple(labels),
        )

    # Pages ---------------------------------------------------------------------------------
    def get_page(self, page_id: str, *, project_key: str = "") -> WikiPage | None:
        page_id = str(page_id).strip()
        if not PAGE_ID.match(page_id):
            return None
        data = self.http.request(
            "getPageById",
            "GET",
            f"/pages/{page_id}",
            self.service(),
            base_url=self.v2(),
            missing_ok=True,
        )
        return self._page(data) if data else None

    def reader(self) -> Credentials:
        """The person the request acts for, with their own grant; refused otherwise (the
        service account sees restricted pages the reader may not)."""
        account_id = acting_account.get()
        if not account_id or not grants.has_grant(account_id):
            raise WikiError(
                "the wiki is searched as you, and you have not signed in with Atlassian here"
            )
        try:
            return UserCredentials(account_id, self.product)
        except AtlassianUnavailable as exc:
            raise WikiError(str(exc)) from None

    def search_pages(
        self,
        query: str,
        *,
        limit: int = 20,
        project_key: str = "",  # Confluence's own permissions apply, as the reader
    ) -> list[WikiPage]:
        query = query.strip()
        cql = "type = page"
        if query:
            cql += f" AND (title ~ {query_string(query)} OR text ~ {query_string(query)})"
        cql += " ORDER BY lastmodified DESC"
        data = self.http.request(
            "searchByCQL",
            "GET",
            "/wiki/rest/api/search",
            self.reader(),
            params={"cql": cql, "limit": max(1, min(limit, 50))},
        )
        base = ((data or {}).get("_links") or {}).get("base") or f"{self.site()}/wiki"
        pages = []
        for result in (data or {}).get("results") or []:
            content = result.get("content") or {}
            if not content.get("id"):
                continue
            space = (content.get("space") or {}).get("key") or ""
            webui = (content.get("_links") or {}).get("webui") or result.get("url") or ""
            pages.append(
                WikiPage(
                    id=str(content["id"]),
                    title=content.get("title") or result.get("title") or "",
                    url=webui if webui.startswith("http") else base + webui,
                    space_key=space,
                )
            )
        return pages[:limit]

    def _listed(self, operation: str, path: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """The results of a v2 list (`operation` at `path`), read as the service account."""
        data = self.http.request(
            operation, "GET", path, self.service(), base_url=self.v2(), params=params
        )
        results: list[dict[str, Any]] = (data or {}).get("results") or []
        return results

    def _page_titled(self, space_id: str, title: str) -> dict[str, Any] | None:
        pages = self._listed(
            "getPagesInSpace",
            f"/spaces/{space_id}/pages",
            {"title": title, "status": "current", "limit": 25},
        )
        for page in pages:
            if page.get("title") == title and page.get("id"):
                return page
        return None

    def _comment_marked(self, page_id: str, marker: str) -> dict[str, Any] | None:
        comments = self._listed(
            "getPageFooterComments",
            f"/pages/{page_id}/footer-comments",
            {"body-format": "storage", "sort": "-created-date", "limit": 50},
        )
        for comment in comments:
            value = ((comment.get("body") or {}).get("storage") or {}).get("value") or ""
            if marker in value:
                return comment
        return None

    # Spaces --------------------------------------------------------------------------------
    def space_id(self, space_key: str) -> str | None:
        if not SPACE_KEY.match(space_key or ""):
            raise WikiError(f"'{space_key}' is not a Confluence space key.")
        key = f"{_CACHE}space:{space_key}"
        cached: str | None = cache.get(key)
        if cached:
            return cached
        for space in self._listed("getSpaces", "/spaces", {"keys": space_key, "limit": 1}):
            if space.get("key") == space_key and space.get("id"):
                cache.set(key, str(space["id"]), 3600)
                return str(space["id"])
        return None

    def ensure_space(self, space_key: str, name: str) -> tuple[str, bool]:
        """The space's id, created when missing. Returns (id, created). Idempotent."""
        existing = self.space_id(space_key)
        if existing:
            return existing, False

        def made() -> dict[str, str] | None:
            found = self.space_id(space_key)
            return {"id": found} if found else None

        # v1 createSpace: the v2 one is behind a beta role model (RBAC) on many sites
        # (https://developer.atlassian.com/cloud/confluence/rest/v2/api-group-space/#api-spaces-post).
        data = self.http.create(
            "createSpace",
            "/wiki/rest/api/space",
            self.service(),
            find=made,
            json={"name": name, "key": space_key},
        )
        return str((data or {}).get("id") or ""), True

    def create_page(
        self,
        *,
        space_key: str,
        title: str,
        body: str,
        labels: Iterable[str] = (),
        project_key: str = "",  # Confluence's own space permissions apply
    ) -> WikiPage:
        space_id = self.space_id(space_key)
        if not space_id:
            raise WikiError(
                f"Confluence has no space '{space_key}'; run `python manage.py wiki_setup`."
            )
        data = self.http.create(
            "createPage",
            "/pages",
            self.service(),
            base_url=self.v2(),
            find=lambda: self._page_titled(space_id, title),
            json={
                "spaceId": space_id,
                "status": "current",
                "title": title,
                "body": {"representation": "storage", "value": storage(body)},
            },
        )
        page_id = str((data or {}).get("id") or "")
        if not page_id:
            raise WikiError("Confluence did not say which page it created (createPage).")
        names = [label for label in dict.fromkeys(labels) if label]
        if names:
            self.http.request(
                "addLabelsToContent",
                "POST",
                f"/wiki/rest/api/content/{page_id}/label",
                self.service(),
                json=[{"prefix": "global", "name": n} for n in names],
            )
        return self._page(data, space_key=space_key, labels=names)

    def add_footer_comment(
        self, *, page_id: str, body: str, mention_account_ids: Iterable[str]
    ) -> None:
        if not PAGE_ID.match(str(page_id)):
            raise WikiError(f"'{page_id}' is not a Confluence page id.")
        mentions = "".join(
            f'<ac:link><ri:user ri:account-id="{escape(a, quote=True)}" /></ac:link> '
            for a in dict.fromkeys(mention_account_ids)
            if a
        )
        # An anchor macro (invisible on the page) marks this comment, so that a retry after a
        # timeout first looks for it among the page's footer comments.
        marker = f"gov-{uuid.uuid4().hex[:16]}"
        anchor = (
            '<ac:structured-macro ac:name="anchor"><ac:parameter ac:name="">'
            f"{marker}</ac:parameter></ac:structured-macro>"
        )
        self.http.create(
            "createFooterComment",
            "/footer-comments",
            self.service(),
            base_url=self.v2(),
            find=lambda: self._comment_marked(str(page_id), marker),
            json={
                "pageId": str(page_id),
                "body": {
                    "representation": "storage",
                    "value": f"<p>{mentions}{escape(body)}</p>{anchor}",
                },
            },
        )
