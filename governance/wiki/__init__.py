"""The wiki seam: supporting documents, the page picker and create-from-template (Confluence
in production, the built-in local wiki on a laptop). Pick the backend with WIKI_BACKEND."""

from functools import cache

from django.conf import settings
from django.utils.module_loading import import_string

from governance.seams import backend_path
from governance.wiki.base import TEMPLATE_KINDS, Wiki, WikiError, WikiPage

BACKENDS = {
    "local": "governance.wiki.local.backend.LocalWiki",
    "confluence": "governance.wiki.confluence.ConfluenceWiki",
}

__all__ = ["TEMPLATE_KINDS", "Wiki", "WikiError", "WikiPage", "get_wiki"]


@cache
def _load(name: str) -> Wiki:
    backend: Wiki = import_string(backend_path("WIKI_BACKEND", name, BACKENDS, WikiError))()
    return backend


def get_wiki() -> Wiki:
    return _load(settings.WIKI_BACKEND)
