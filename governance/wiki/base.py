"""The wiki interface, shaped for Confluence Cloud (v2 pages, spaces and footer comments; v1
CQL search and labels; see contracts/)."""

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from governance.seams import RemoteError

# templateKind -> (title prefix, canonical label). Pages made from a template carry two
# labels: the site's PMO label and the canonical label of their kind.
TEMPLATE_KINDS: dict[str, tuple[str, str]] = {
    "boardPaper": ("Board paper", "governance-board-paper"),
    "steeringMinutes": ("Steering committee minutes", "governance-steering-minutes"),
    "lessons": ("Lessons learned", "governance-lessons"),
}


class WikiError(RemoteError):
    """The wiki could not answer (down, misconfigured, refused)."""


@dataclass(frozen=True)
class WikiPage:
    id: str
    title: str
    url: str
    space_key: str = ""
    labels: tuple[str, ...] = ()


class Wiki(Protocol):
    def get_page(self, page_id: str, *, project_key: str = "") -> WikiPage | None:
        """Page-exists check. Confluence: GET /wiki/api/v2/pages/{id}. `project_key`: the
        project that will reference the page; the local wiki answers None for another
        project's page, as /wiki/pages/<id>/ does (Confluence's own permissions apply)."""

    def search_pages(self, query: str, *, limit: int = 20, project_key: str = "") -> list[WikiPage]:
        """Supporting-documents picker. Confluence: GET /wiki/rest/api/search (CQL).
        `project_key`: the project searching; the local wiki offers that project's pages alone
        (Confluence answers with what its permissions let the app see)."""

    def create_page(
        self,
        *,
        space_key: str,
        title: str,
        body: str,
        labels: Iterable[str] = (),
        project_key: str = "",
    ) -> WikiPage:
        """Confluence: GET /wiki/api/v2/spaces?keys= then POST /wiki/api/v2/pages, then
        POST /wiki/rest/api/content/{id}/label for the labels. `project_key`: the project the
        page is made for; the local wiki serves it to that project's viewers alone (Confluence
        applies its own space permissions and ignores it)."""

    def add_footer_comment(
        self, *, page_id: str, body: str, mention_account_ids: Iterable[str]
    ) -> None:
        """Best-effort approval nudge. Confluence: POST /wiki/api/v2/footer-comments."""
