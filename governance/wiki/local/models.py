"""The built-in wiki's pages and footer comments, standing in for Confluence."""

from django.db import models


class LocalWikiPage(models.Model):
    space_key = models.CharField(max_length=50)
    title = models.CharField(max_length=255)
    body = models.TextField(blank=True, default="")
    labels = models.JSONField(default=list, blank=True)
    # The project the page was made for (a board paper, minutes, lessons): only those who can
    # view that project read it. Blank: a page of the site, read by site admins alone.
    project_key = models.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["space_key", "title"]

    def __str__(self) -> str:
        return f"{self.space_key}: {self.title}"


class LocalWikiComment(models.Model):
    page = models.ForeignKey(LocalWikiPage, on_delete=models.CASCADE, related_name="comments")
    body = models.TextField()
    mention_account_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"Comment on {self.page_id}"
