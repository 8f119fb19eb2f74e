from typing import Any

from django.contrib import admin

from governance.wiki.local.models import LocalWikiComment, LocalWikiPage


class CommentInline(admin.TabularInline[LocalWikiComment, Any]):
    model = LocalWikiComment
    extra = 0


@admin.register(LocalWikiPage)
class LocalWikiPageAdmin(admin.ModelAdmin[LocalWikiPage]):
    list_display = ("title", "space_key", "created_at")
    list_filter = ("space_key",)
    search_fields = ("title", "body")
    inlines = [CommentInline]


@admin.register(LocalWikiComment)
class LocalWikiCommentAdmin(admin.ModelAdmin[LocalWikiComment]):
    list_display = ("page", "created_at")
    search_fields = ("body",)
    list_select_related = ("page",)
