"""The local wiki backend: the Wiki protocol over the local_wiki models. Pages are served by
the app itself at /wiki/pages/<id>/ so links work on a laptop."""

from collections.abc import Iterable

from django.db.models import Q
from django.urls import reverse

from governance import cleaning
from governance.wiki.base import WikiPage
from governance.wiki.local.models import LocalWikiComment, LocalWikiPage


def _page(page: LocalWikiPage) -> WikiPage:
    return WikiPage(
        id=str(page.pk),
        title=page.title,
        url=reverse("wiki-page", args=[page.pk]),
        space_key=page.space_key,
        labels=tuple(page.labels or ()),
    )


class LocalWiki:
    def get_page(self, page_id: str, *, project_key: str = "") -> WikiPage | None:
        pk = cleaning.whole_number(page_id)
        if pk is None:
            return None
        page = LocalWikiPage.objects.filter(pk=pk).first()
        if page is None or (project_key and page.project_key not in ("", project_key)):
            return None  # another project's page is not there for this one (nor its title)
        return _page(page)

    def search_pages(self, query: str, *, limit: int = 20, project_key: str = "") -> list[WikiPage]:
        pages = LocalWikiPage.objects.all()
        if project_key:  # the pages those who search can read (as /wiki/pages/<id>/ serves them)
            pages = pages.filter(project_key=project_key)
        query = query.strip()
        if query:
            pages = pages.filter(Q(title__icontains=query) | Q(body__icontains=query))
        return [_page(p) for p in pages.order_by("title")[:limit]]

    def create_page(
        self,
        *,
        space_key: str,
        title: str,
        body: str,
        labels: Iterable[str] = (),
        project_key: str = "",
    ) -> WikiPage:
        page = LocalWikiPage.objects.create(
            space_key=space_key,
            title=title,
            body=body,
            labels=list(labels),
            project_key=project_key,
        )
        return _page(page)

    def add_footer_comment(
        self, *, page_id: str, body: str, mention_account_ids: Iterable[str]
    ) -> None:
        page = LocalWikiPage.objects.get(pk=int(page_id))
        LocalWikiComment.objects.create(
            page=page, body=body, mention_account_ids=list(mention_account_ids)
        )
