"""What the Assistant page keeps per person: the conversation (what was said and shown, and
the model's message history) and the write proposals awaiting a click."""

import uuid
from typing import Any

from django.conf import settings
from django.db import models

from governance.models import as_choices

MESSAGE_ROLES = ["person", "assistant", "read", "proposal", "notice"]
PROPOSAL_STATES = ["Pending", "Applied", "Refused", "Dismissed", "Expired"]
# Where a proposal was prepared: by the language model from a question, or by the person's
# own form on the page (which shows its outcome in place, not in the conversation).
PROPOSAL_ORIGINS = ["model", "form"]


class Conversation(models.Model):
    """One per person: the model's message history (to continue the conversation)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assistant_conversation"
    )
    history = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Conversation of {self.user_id}"


class Message(models.Model):
    """One entry of the transcript the person sees."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assistant_messages"
    )
    at = models.DateTimeField(auto_now_add=True)
    role = models.CharField(max_length=12, choices=as_choices(MESSAGE_ROLES))
    text = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict, blank=True)
    proposal = models.ForeignKey(
        "Proposal", null=True, blank=True, on_delete=models.SET_NULL, related_name="messages"
    )
    # Not stored: what the page shows of `data["result"]` (agent.present), set by the view.
    shown: dict[str, Any] | None = None

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:40]}"


class Proposal(models.Model):
    """A write the assistant prepared: it runs only when its person clicks Confirm, before it
    expires."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assistant_proposals"
    )
    action = models.CharField(max_length=64)
    arguments = models.JSONField(default=dict)
    preview = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=10, choices=as_choices(PROPOSAL_STATES), default="Pending")
    origin = models.CharField(max_length=5, choices=as_choices(PROPOSAL_ORIGINS), default="model")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    decided_at = models.DateTimeField(null=True, blank=True)
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"{self.action} ({self.state})"
