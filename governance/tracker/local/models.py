"""The built-in tracker's data: accounts, projects, browse grants, groups and issues. It
stands in for Jira on a laptop and in tests; governance records never point into it."""

from django.db import models


class LocalAccount(models.Model):
    account_id = models.CharField(max_length=128, unique=True)
    name = models.CharField(max_length=150, unique=True)
    display_name = models.CharField(max_length=200)
    email = models.EmailField(blank=True, default="")
    avatar_url = models.CharField(max_length=500, blank=True, default="")
    is_site_admin = models.BooleanField(default=False)
    active = models.BooleanField(default=True)

    class Meta:
        ordering = ["display_name"]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.name})"


class LocalProject(models.Model):
    key = models.CharField(max_length=32, unique=True)
    name = models.CharField(max_length=255)
    lead = models.ForeignKey(LocalAccount, on_delete=models.PROTECT, related_name="led_projects")
    browsers: models.ManyToManyField[LocalAccount, "LocalBrowseGrant"] = models.ManyToManyField(
        LocalAccount, through="LocalBrowseGrant", related_name="browsable_projects"
    )

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return f"{self.key}: {self.name}"


class LocalBrowseGrant(models.Model):
    project = models.ForeignKey(LocalProject, on_delete=models.CASCADE)
    account = models.ForeignKey(LocalAccount, on_delete=models.CASCADE)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "account"], name="browse_grant_once")
        ]

    def __str__(self) -> str:
        return f"{self.account.name} browses {self.project.key}"


class LocalGroup(models.Model):
    name = models.CharField(max_length=255, unique=True)
    members = models.ManyToManyField(LocalAccount, related_name="groups", blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class LocalIssue(models.Model):
    key = models.CharField(max_length=50, unique=True)
    project = models.ForeignKey(LocalProject, on_delete=models.CASCADE, related_name="issues")
    summary = models.CharField(max_length=255)
    issue_type = models.CharField(max_length=50, default="Epic")
    status = models.CharField(max_length=50, default="To Do")
    # The per-project 'Work Package' custom field the service writes back.
    work_package = models.CharField(max_length=200, null=True, blank=True)

    class Meta:
        ordering = ["project", "key"]

    def __str__(self) -> str:
        return f"{self.key}: {self.summary}"
