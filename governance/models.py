"""Kernel data: identity, the governance mirror of each tracker project, editor nominations,
site settings, the append-only audit log, API tokens and the outbound-call outbox."""

import re
import secrets
import uuid
from collections.abc import Iterable
from decimal import Decimal
from typing import Annotated, Any, NoReturn, TypeVar

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import connection, models, transaction
from django.utils import timezone
from pydantic import Field

from governance import cleaning, specs
from governance.cleaning import FieldErrors
from governance.errors import Frozen

RAG_CHOICES = ["Red", "Amber", "Green", "Blue", "None"]
CANONICAL_THEMES = [
    "Cost Out",
    "Revenue Growth",
    "Productivity",
    "Risk & Compliance",
    "Customer Experience",
    "Strategic",
]
THEMES_MAX = 12
BR_CADENCES = ["Monthly", "Quarterly", "Annual"]


def as_choices(values: list[str]) -> list[tuple[str, str]]:
    """A model field's choices from its values: each value is its own label."""
    return [(v, v) for v in values]


# The approval states in which a project's registers are frozen: the business-case app says
# which (`freeze_registers_in`, from its AppConfig.ready()); the kernel only reads them.
FROZEN_APPROVAL_STATUSES: set[str] = set()


def freeze_registers_in(states: Iterable[str]) -> None:
    FROZEN_APPROVAL_STATUSES.clear()
    FROZEN_APPROVAL_STATUSES.update(states)


_ST = TypeVar("_ST", contravariant=True)
_GT = TypeVar("_GT", covariant=True)


class MoneyField(models.DecimalField[_ST, _GT]):
    """An amount: numeric(18, 2), at most 9999999999999999.99 either way
    (`cleaning.MAX_AMOUNT`), read back with its exact digits on every database.

    PostgreSQL stores numeric(18, 2). SQLite has no decimal type: a "decimal" column keeps
    15 significant digits as a float, so amounts past 10^13 lost their cents and the maximum
    (read back as 1e16, past the column) could not be read at all. There the column is text
    holding the decimal's digits (the driver writes a Decimal as its text), and the amount is
    read from them. Sums and sorts in SQL read it as a float there (exact to 15 significant
    digits; on PostgreSQL they are exact); sorts cast it (`registers.paging._amount`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("max_digits", 18)
        kwargs.setdefault("decimal_places", 2)
        super().__init__(*args, **kwargs)

    def get_internal_type(self) -> str:
        # Not "DecimalField": SQLite's converter for that type reads a float to 15 digits.
        return "MoneyField"

    def db_type(self, connection: Any) -> str:
        if connection.vendor == "sqlite":
            return "text"
        return str(connection.data_types["DecimalField"] % self.db_type_parameters(connection))

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Decimal | None:
        if value is None or isinstance(value, Decimal):
            return value
        # SQLite's text (or, for a value written before the column was text, a float or an
        # int; `str` gives a float's shortest exact form).
        return Decimal(str(value)).quantize(Decimal(1).scaleb(-self.decimal_places))


class User(AbstractUser):
    """A person who signs in. `account_id` is their tracker accountId: the only way governance
    records refer to people. Names shown on pages come from the tracker at render time."""

    account_id = models.CharField(max_length=128, unique=True)

    class Meta:
        ordering = ["username"]

    def __str__(self) -> str:
        return self.username


# How many revision rows there are: a writer raises one that no other open transaction holds,
# so writers never queue behind each other's (`summaries_changed`).
REVISION_SHARDS = 16


class SummaryRevision(models.Model):
    """The revision of the summaries stored per reader (`governance.summaries`): REVISION_SHARDS
    rows, whose stamps together name the state of the facts they read. Every write of those
    facts raises one of them in its transaction (`summaries_changed`), so that no summary read
    before the write is answered after it commits."""

    stamp = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"Summaries' revision {self.pk}: {self.stamp}"


def summaries_changed(*args: Any, **kwargs: Any) -> None:
    """Raise the stored summaries' revision, in the writer's transaction where it writes in
    one (every service does: committed or rolled back with the write; a write in autocommit
    raises it just after, in a transaction of its own): a new random stamp on the first
    revision row no other open transaction holds (`FOR UPDATE SKIP LOCKED`; the rows it holds
    already count as free to it). A long transaction (the periodic refresh) holds a row or a
    few and stalls no other writer while a row is free; only a writer that finds all
    REVISION_SHARDS held waits, for one of them (then a deadlock is possible, and PostgreSQL
    refuses one of the two). A random 63-bit stamp, not the next number: a number could come
    back (a database restored from a backup) and find a summary read from other rows under it.
    A signal receiver too (its arguments are ignored)."""
    stamp = secrets.randbits(63)
    if not connection.features.has_select_for_update_skip_locked:
        # SQLite: one writer at a time whatever rows there are; one statement.
        if not SummaryRevision.objects.filter(pk=1).update(stamp=stamp):
            SummaryRevision.objects.bulk_create(
                [SummaryRevision(pk=n) for n in range(1, REVISION_SHARDS + 1)],
                ignore_conflicts=True,
            )
            SummaryRevision.objects.filter(pk=1).update(stamp=stamp)
        return
    # Inside the writer's transaction, no savepoint of its own (two statements, not four).
    with transaction.atomic(savepoint=False):
        free = SummaryRevision.objects.select_for_update(skip_locked=True).order_by("pk")
        pk = free.values_list("pk", flat=True).first()
        if pk is None:
            made = set(SummaryRevision.objects.values_list("pk", flat=True))
            missing = [n for n in range(1, REVISION_SHARDS + 1) if n not in made]
            if missing:  # fewer rows than made by the migration (a database emptied since)
                SummaryRevision.objects.bulk_create(
                    [SummaryRevision(pk=n) for n in missing], ignore_conflicts=True
                )
                pk = missing[0]
            else:  # every row held by another open writer: wait for one of them
                pk = secrets.choice(sorted(made))
        SummaryRevision.objects.filter(pk=pk).update(stamp=stamp)


class StoredSummary(models.Model):
    """A summary over every project one reader can view (`governance.summaries`), as read at a
    revision (`SummaryRevision`) for an audience (what the access gate's list condition depends
    on besides the rows), valid until a time (the soonest a row it read expires)."""

    user = models.ForeignKey("User", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=64)
    audience = models.CharField(max_length=64)
    revision = models.BigIntegerField()
    valid_until = models.DateTimeField(null=True, blank=True)
    # JSON text, read back exactly as written (a JSON column of PostgreSQL reorders keys).
    value = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "name"], name="one_summary_per_reader")
        ]

    def __str__(self) -> str:
        return f"{self.name} of user {self.user_id}"


class ProjectQuerySet(models.QuerySet["Project"]):
    """The projects. A write that bypasses `save` (an update, a bulk write) raises the stored
    summaries' revision, as a save does through its signal (`governance.summaries`)."""

    def update(self, **kwargs: Any) -> int:
        count = super().update(**kwargs)
        if count:
            summaries_changed()
        return count

    def bulk_update(
        self, objs: Iterable["Project"], fields: Any, batch_size: int | None = None
    ) -> int:
        count = super().bulk_update(objs, fields, batch_size=batch_size)
        if count:
            summaries_changed()
        return count

    def bulk_create(self, objs: Iterable["Project"], *args: Any, **kwargs: Any) -> list["Project"]:
        made = super().bulk_create(objs, *args, **kwargs)
        if made:
            summaries_changed()
        return made


class Project(models.Model):
    """The governance home of one tracker project.

    `name` and `lead_account_id` mirror the tracker (refreshed by the upkeep in
    governance/mirror.py, never on a read). The business-case facts the access gate and the
    registers need (sponsor, steering committee, BAU owner, approval status) are kept here by
    the charter services in the same transaction as the business case, so the kernel never
    imports the charter app."""

    key = models.CharField(max_length=32, unique=True)
    # The tracker's id of the project (Jira's numeric project id): what the mirror is keyed
    # by, since a project's key can change. Null only until the first read after upgrading.
    tracker_id = models.CharField(max_length=64, unique=True, null=True, blank=True)
    # Keys the project had before: URLs naming one redirect to the current key.
    former_keys = models.JSONField(default=list, blank=True)
    # When the tracker said the project was deleted (webhook); the registers are kept.
    tracker_deleted_at = models.DateTimeField(null=True, blank=True)
    name = models.CharField(max_length=255)
    lead_account_id = models.CharField(max_length=128, blank=True, default="")
    approval_status = models.CharField(max_length=32, default="Exploring")
    sponsor_account_id = models.CharField(max_length=128, blank=True, default="")
    steering_account_ids = models.JSONField(default=list, blank=True)
    bau_owner_account_id = models.CharField(max_length=128, blank=True, default="")
    # When the project's undecided exception opened (beyond its tolerances), kept by the
    # status services with the exception record; null when it has none.
    exception_opened_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Versions the editor list, the one part of the project the API writes (its ETag).
    editors_revision = models.PositiveIntegerField(default=1)
    # Versions what the register pages show of the project: a new random stamp in the
    # transaction of every change of its facts (`signals.project_changed`: a register row,
    # the business case, a status); the register summary is read at it (registers.summary),
    # and a proposal's stored total keyed by it (investment.totals): a write of those facts
    # that does not announce itself leaves both behind.
    # Only ever set by `bump_registers_revision`, never written back by a save.
    registers_revision = models.PositiveBigIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ProjectQuerySet.as_manager()

    class Meta:
        ordering = ["key"]

    def __str__(self) -> str:
        return f"{self.key}: {self.name}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        # A save of a row read before a register write must not put the revision back.
        if not self._state.adding and kwargs.get("update_fields") is None:
            kwargs["update_fields"] = [
                f.attname
                for f in self._meta.concrete_fields
                if not f.primary_key and f.attname != "registers_revision"
            ]
        super().save(*args, **kwargs)

    @property
    def registers_frozen(self) -> bool:
        return self.approval_status in FROZEN_APPROVAL_STATUSES

    def assert_registers_unfrozen(self) -> None:
        """The one freeze rule (docs/product.md section 2): register writes other than decision
        notes are refused with 409 `frozen` from close-out onward and when archived."""
        if self.registers_frozen:
            raise Frozen(
                f"The registers of {self.key} are frozen: the business case is "
                f"{self.approval_status}. Only notes on decisions can still be added."
            )


class EditorNomination(models.Model):
    """A tracker user the Project Lead nominated as an editor of one project."""

    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="editor_nominations"
    )
    account_id = models.CharField(max_length=128)
    nominated_by_account_id = models.CharField(max_length=128)
    nominated_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project", "nominated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["project", "account_id"], name="editor_once_per_project"
            )
        ]

    def __str__(self) -> str:
        return f"{self.project.key}: {self.account_id}"


def default_themes() -> list[dict[str, Any]]:
    return [{"name": name, "enabled": True} for name in CANONICAL_THEMES]


class SiteSettings(models.Model):
    """Site-wide settings, one row (pk=1), edited by site admins in Portfolio settings."""

    governance_group = models.CharField(max_length=255, blank=True, default="")
    themes = models.JSONField(default=default_themes)
    br_cadence_default = models.CharField(max_length=16, default="Quarterly")
    # The currency every amount on the pages is shown in (an ISO 4217 code).
    currency = models.CharField(max_length=3, default="EUR")
    # Overrides of the derived-RAG thresholds; missing keys take settings.RAG_THRESHOLDS.
    rag_thresholds = models.JSONField(default=dict, blank=True)
    # The project tolerances the approval form pre-fills (null: none proposed).
    tolerance_days_default = models.PositiveIntegerField(null=True, blank=True)
    tolerance_cost_percent_default = models.DecimalField(
        max_digits=7, decimal_places=2, null=True, blank=True
    )
    tolerance_benefit_percent_default = models.DecimalField(
        max_digits=7, decimal_places=2, null=True, blank=True
    )
    updated_at = models.DateTimeField(auto_now=True)
    updated_by_account_id = models.CharField(max_length=128, blank=True, default="")
    revision = models.PositiveIntegerField(default=1)

    class Meta:
        verbose_name = "site settings"
        verbose_name_plural = "site settings"

    def __str__(self) -> str:
        return "Site settings"

    @classmethod
    def load(cls) -> "SiteSettings":
        obj, _ = cls.objects.get_or_create(pk=1)
        return obj

    @classmethod
    def read(cls) -> "SiteSettings":
        """The stored row, or the defaults while none is stored (nothing written: the access
        gate's read; `load` makes the row)."""
        return cls.objects.filter(pk=1).first() or cls(pk=1)


THEME_NAME_MAX = 60
GROUP_MAX = 255
CURRENCY_MESSAGE = "Must be a three-letter currency code, like EUR or GBP."


def clean_themes(value: Any) -> tuple[list[dict[str, Any]] | None, specs.Refusals | None]:
    """The themes a business case may take: {name, enabled} each (a bare name is enabled),
    names required and unique ignoring case, at most THEMES_MAX. An item may say which stored
    theme it was (renamedFrom): a different name renames that theme, and the service carries
    every business case naming it (`site_settings_update`)."""
    if not isinstance(value, list):
        return None, {"": ["Must be a list of {name, enabled}."]}
    if len(value) > THEMES_MAX:
        return None, {"": [f"At most {THEMES_MAX} themes (this has {len(value)})."]}
    errors = FieldErrors()
    themes, seen = [], set()
    for index, item in enumerate(value):
        if isinstance(item, str):
            item = {"name": item, "enabled": True}
        if not isinstance(item, dict):
            errors.add(f"[{index}]", "Must be an object {name, enabled}.")
            continue
        name, error = cleaning.text(item.get("name"), max_length=THEME_NAME_MAX, required=True)
        if error:
            errors.add(f"[{index}].name", error)
            continue
        if name.casefold() in seen:
            errors.add(f"[{index}].name", f"'{name}' appears twice.")
            continue
        seen.add(name.casefold())
        enabled = item.get("enabled", True)
        if not isinstance(enabled, bool):
            errors.add(f"[{index}].enabled", "Must be true or false.")
            continue
        theme: dict[str, Any] = {"name": name, "enabled": enabled}
        was = item.get("renamedFrom")
        if was not in (None, ""):
            if not isinstance(was, str) or len(was) > THEME_NAME_MAX:
                errors.add(f"[{index}].renamedFrom", "Must be the name of a theme.")
                continue
            theme["renamedFrom"] = was.strip()
        themes.append(theme)
    return themes, dict(errors)


# The range each RAG threshold takes (docs/product.md): an overrun of up to 1000 %, up to ten
# years of slip or of waiting, a risk score of up to 25 (5 x 5). Taken at every entry (API,
# settings page) and applied again where the thresholds are read (`clamp_thresholds`), so a
# value stored out of range draws the status rather than overflowing a date.
THRESHOLD_RANGES: dict[str, tuple[int, int]] = {
    "costGreenMaxPct": (0, 1000),
    "costAmberMaxPct": (0, 1000),
    "scheduleGreenMaxDays": (0, 3650),
    "scheduleAmberMaxDays": (0, 3650),
    "scopeRedAfterDays": (0, 3650),
    "riskAmberMinScore": (0, 25),
    "riskRedMinScore": (0, 25),
}


THRESHOLDS_SCHEMA = {
    "type": "object",
    "properties": {
        key: {"type": ["number", "null"], "minimum": low, "maximum": high}
        for key, (low, high) in THRESHOLD_RANGES.items()
    },
}


def threshold_message(key: str) -> str:
    low, high = THRESHOLD_RANGES[key]
    return f"Must be a number from {low} to {high}."


def clean_thresholds(value: Any) -> tuple[dict[str, Any] | None, specs.Refusals | None]:
    """Threshold overrides as sent: each a known threshold, a number in its range
    (THRESHOLD_RANGES), or null (back to the default). The service merges them onto the
    stored ones and checks each pair's order on the result."""
    if not isinstance(value, dict):
        return None, {"": ["Must be an object."]}
    errors = FieldErrors()
    sent = {}
    for key, raw in value.items():
        if key not in settings.RAG_THRESHOLDS:
            errors.add(f".{key}", "Unknown threshold.")
        elif raw is not None and not _in_range(key, raw):
            errors.add(f".{key}", threshold_message(key))
        else:
            sent[key] = raw
    return sent, dict(errors)


def _in_range(key: str, raw: Any) -> bool:
    if not isinstance(raw, int | float) or isinstance(raw, bool):
        return False
    low, high = THRESHOLD_RANGES.get(key, (0, 0))
    return low <= raw <= high  # NaN is in no range; compared before any int() of the digits


def clamp_thresholds(thresholds: dict[str, Any]) -> dict[str, Any]:
    """The thresholds with each value brought into its range (a value stored before the
    ranges, or set in the environment, past it or not a number takes the nearest bound)."""
    clamped = dict(thresholds)
    for key, (low, high) in THRESHOLD_RANGES.items():
        value = clamped.get(key)
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            clamped[key] = low
        elif not low <= value <= high:
            clamped[key] = min(max(value, low), high)
    return clamped


def clean_currency(value: Any) -> tuple[str | None, str | None]:
    code = value.strip().upper() if isinstance(value, str) else None
    if not code or not re.fullmatch(r"[A-Z]{3}", code):
        return None, CURRENCY_MESSAGE
    return code, None


THEMES_SCHEMA = {
    "type": "array",
    "maxItems": THEMES_MAX,
    "items": {
        "type": "object",
        "properties": {
            "name": cleaning.required_text_schema(THEME_NAME_MAX),
            "enabled": {"type": "boolean"},
            "renamedFrom": {
                "type": ["string", "null"],
                "maxLength": THEME_NAME_MAX,
                "description": "The stored theme this one was: a new name renames it, and "
                "every business case naming it takes the new name.",
            },
        },
    },
}


PERCENT_SCHEMA = {"type": ["number", "null"], "minimum": 0, "maximum": 1000}


def clean_percent(value: Any) -> tuple[Any, str | None]:
    """A percentage: blank is none; otherwise a number from 0 to 1000."""
    number, error = cleaning.signed_number(value)
    if error:
        return None, error
    if number is not None and not 0 <= number <= 1000:
        return None, "Must be a percentage from 0 to 1000."
    return number, None


class SiteSettingsSpec(specs.Spec):
    """The site settings a site administrator writes, and what the API answers besides."""

    noun = "site settings"

    governance_group: Annotated[str | None, specs.Text(GROUP_MAX, nullable=True)] = Field(
        None, title="Governance group"
    )
    themes: Annotated[list[Any] | None, specs.Checked(clean_themes, THEMES_SCHEMA)] = Field(
        None, title="Themes"
    )
    br_cadence_default: Annotated[str | None, specs.RequiredChoice(tuple(BR_CADENCES))] = Field(
        None, title="Default benefit review cadence"
    )
    currency: Annotated[
        str | None,
        specs.Checked(
            clean_currency,
            {"type": "string", "description": "An ISO 4217 code (EUR, GBP), any case."},
        ),
    ] = Field(None, title="Currency")
    rag_thresholds: Annotated[
        dict[str, Any] | None, specs.Checked(clean_thresholds, THRESHOLDS_SCHEMA)
    ] = Field(None, title="RAG thresholds")

    tolerance_days_default: Annotated[Any, specs.BoundedInteger(0, 3650)] = Field(
        None, title="Default time tolerance (days late)"
    )
    tolerance_cost_percent_default: Annotated[Any, specs.Checked(clean_percent, PERCENT_SCHEMA)] = (
        Field(None, title="Default cost tolerance (% over budget)")
    )
    tolerance_benefit_percent_default: Annotated[
        Any, specs.Checked(clean_percent, PERCENT_SCHEMA)
    ] = Field(None, title="Default benefit tolerance (% under)")

    updated_at: specs.Moment = None
    updated_by_account_id: specs.AnsweredAccount = Field(None, title="Updated by")
    revision: specs.Revision = None


class AuditEntryQuerySet(models.QuerySet["AuditEntry"]):
    def update(self, **kwargs: Any) -> NoReturn:
        raise TypeError("Audit entries are append-only.")

    def delete(self) -> NoReturn:
        raise TypeError("Audit entries are append-only.")


class AuditEntry(models.Model):
    """One write, as it happened. Append-only: never updated, never deleted."""

    at = models.DateTimeField(default=timezone.now, db_index=True)
    actor_account_id = models.CharField(max_length=128)
    project_key = models.CharField(max_length=32, blank=True, default="", db_index=True)
    kind = models.CharField(max_length=64, db_index=True)
    target_type = models.CharField(max_length=64)
    target_id = models.CharField(max_length=64, blank=True, default="")
    changes = models.JSONField(default=dict, blank=True)
    # "agent" when the write came through the assistant's action catalogue; empty otherwise.
    channel = models.CharField(max_length=16, blank=True, default="")
    client = models.CharField(max_length=100, blank=True, default="")

    objects = AuditEntryQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "audit entries"
        indexes = [models.Index(fields=["project_key", "-at"], name="audit_project_at")]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M} {self.kind} {self.target_type}:{self.target_id}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise TypeError("Audit entries are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("Audit entries are append-only.")


class ApiToken(models.Model):
    """A personal API token. Only its SHA-256 digest is stored; the token is shown once."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12)
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class OutboundTask(models.Model):
    """A durable outbound call (tracker write-back, wiki), written in the same transaction as
    the change that needs it and run after commit, with retries and back-off."""

    class State(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        DEAD = "dead"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    payload = models.JSONField(default=dict)
    state = models.CharField(max_length=16, choices=State.choices, default=State.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    run_after = models.DateTimeField(default=timezone.now)
    locked_until = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["state", "run_after"], name="outbox_due")]

    def __str__(self) -> str:
        return f"{self.name} [{self.state}]"


class FailureCount(models.Model):
    """A throttle's count kept in the database while the shared cache cannot be reached
    (governance.throttling): failures under `key` within the fixed window ending `until`."""

    key = models.CharField(max_length=200, unique=True)
    count = models.PositiveIntegerField(default=0)
    until = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.key}: {self.count}"


class SpentAuthorizationCode(models.Model):
    """An OAuth authorization code already exchanged for tokens (governance.oauth): a second
    exchange is refused and ends every token issued from the first (RFC 6749 section 4.1.2).
    Kept as long as those tokens can live (the refresh token's lifetime)."""

    code_digest = models.CharField(max_length=64, unique=True)  # SHA-256 of the code
    token_family = models.UUIDField(null=True, blank=True)
    access_token_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"code {self.code_digest[:12]}…"


class PeriodicJob(models.Model):
    """One job `manage.py runperiodic` runs on a schedule (governance.periodic): its row is
    the lock two concurrent runs contend for, and records when it last ran."""

    name = models.CharField(max_length=100, primary_key=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_finished_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
    last_failed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name


class AtlassianGrant(models.Model):
    """A person's Atlassian OAuth grant (TRACKER_BACKEND=jira): their access and refresh
    tokens, encrypted with ATLASSIAN_TOKEN_KEY (never stored or logged in clear), and the
    cloud id of the configured site. Deleted when they sign out."""

    user = models.OneToOneField(
        "governance.User", on_delete=models.CASCADE, related_name="atlassian_grant"
    )
    account_id = models.CharField(max_length=128, unique=True)
    cloud_id = models.CharField(max_length=64)
    access_token = models.TextField()
    refresh_token = models.TextField(blank=True, default="")
    expires_at = models.DateTimeField()
    scopes = models.TextField(blank=True, default="")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Atlassian grant of {self.account_id}"


class TrackerFieldState(models.Model):
    """The tracker's 'Work Package' custom field as last found or created: its id, its
    context and the projects that context covers (one row per field name; the row lock
    serialises workers that would otherwise create it twice)."""

    name = models.CharField(max_length=255, unique=True)
    field_id = models.CharField(max_length=64, blank=True, default="")
    context_id = models.CharField(max_length=64, blank=True, default="")
    # project key -> project id, for the projects the context is known to cover.
    projects = models.JSONField(default=dict, blank=True)
    # project key -> why the field cannot be written there (a team-managed project).
    unwritable = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.name


class TrackerWebhooks(models.Model):
    """The Jira dynamic webhooks this installation holds (one row, pk=1): their ids, what they
    were registered for (the admin whose grant holds them, the URL, the JQL over the linked
    projects' ids) and when they expire (30 days after registration or the last refresh).
    Kept by the `jira_webhooks` periodic job through the outbox (governance.webhooks)."""

    webhook_ids = models.JSONField(default=list, blank=True)
    account_id = models.CharField(max_length=128, blank=True, default="")
    url = models.CharField(max_length=500, blank=True, default="")
    jql = models.TextField(blank=True, default="")
    expires_at = models.DateTimeField(null=True, blank=True)
    registered_at = models.DateTimeField(null=True, blank=True)
    refreshed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "tracker webhooks"

    def __str__(self) -> str:
        return f"Jira webhooks {self.webhook_ids}"


class TrackerEventReceipt(models.Model):
    """One tracker event as received (webhook), kept so that the same delivery coming again
    changes nothing twice. `dedupe_key`: Jira's webhook identifier header, else the event,
    its timestamp and the issue or project it is about."""

    dedupe_key = models.CharField(max_length=255, unique=True)
    event = models.CharField(max_length=64)
    received_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.dedupe_key


class FormSubmission(models.Model):
    """A create form's one-time token, written in the transaction of the record it created
    (governance.submissions): the same form sent again (a double click, a resend, three
    tabs) finds it and is answered with that record instead of creating another."""

    token = models.CharField(max_length=64, unique=True)
    account_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=64)
    target_id = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.kind} {self.target_id}"


# --- Notifications ---------------------------------------------------------------------------
# What a person is told, by e-mail and in the app. Each kind can be turned off per person.
NOTIFICATION_KINDS = {
    "case_submitted": "A business case is submitted for my approval",
    "change_routed": "A change request is routed to me to decide",
    "status_stale": "The status of a project I lead is going stale",
    "weekly_digest": "A weekly digest of what is waiting for me",
    "project_exception": "A project I lead or sponsor goes beyond its tolerances",
    "gate_review": "A gate review awaits my decision, or was decided on a project I lead",
    "proposal_prioritised": "A proposal I lead or sponsor is prioritised by the board",
}


class Notification(models.Model):
    """One message to one person. `dedupe_key` names the event it tells of, so the same
    event never makes a second notification (nor a second e-mail)."""

    recipient_account_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=32, choices=list(NOTIFICATION_KINDS.items()))
    project_key = models.CharField(max_length=32, blank=True, default="")
    subject = models.CharField(max_length=255)
    body = models.TextField(blank=True, default="")
    url = models.CharField(max_length=500, blank=True, default="")
    dedupe_key = models.CharField(max_length=255, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    read_at = models.DateTimeField(null=True, blank=True)
    emailed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["recipient_account_id", "read_at"])]

    def __str__(self) -> str:
        return f"{self.kind} to {self.recipient_account_id}: {self.subject}"


class NotificationOptOut(models.Model):
    """A kind of notification this person turned off (neither e-mail nor in-app)."""

    account_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=32, choices=list(NOTIFICATION_KINDS.items()))

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account_id", "kind"], name="one_opt_out_per_kind")
        ]

    def __str__(self) -> str:
        return f"{self.account_id} opted out of {self.kind}"
