"""Models of this app."""

from django.conf import settings
from django.db import models


class PortfolioColumns(models.Model):
    """The portfolio columns one person chose to see (column keys, in the page's order).
    Someone without a row sees the default set."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="portfolio_columns"
    )
    columns = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"portfolio columns of {self.user}"
