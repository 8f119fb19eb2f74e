"""Outbound calls of the business case, run by the outbox after commit."""

from typing import Any

from charter import finance
from charter.models import BusinessCase
from governance import outbox
from governance.seats import seat_account_id
from governance.wiki import get_wiki


def board_paper_page_id(case: BusinessCase) -> str | None:
    """The financial case's board paper, else the first supporting link made from the board
    paper template."""
    page_id: str | None = finance.present(case.financial_case)["boardPaperPageId"]
    if page_id:
        return page_id
    for link in case.supporting_links or []:
        linked: str | None = link.get("pageId")
        if link.get("templateKind") == "boardPaper" and linked:
            return linked
    return None


@outbox.handler("charter.approval_nudge", "Approval nudge on the board paper")
def approval_nudge(payload: dict[str, Any]) -> None:
    """Best effort: a footer comment on the board paper @mentioning the sponsor. Recomputed
    from the case as it is now: nothing is posted once the case has left Submitted, without a
    board paper or a sponsor, or when this submission was already nudged."""
    case = (
        BusinessCase.objects.select_related("project")
        .filter(project__key=payload.get("projectKey"))
        .first()
    )
    if case is None or case.approval_status != "Submitted" or case.submitted_at is None:
        return
    if case.approval_nudge_sent_for == case.submitted_at:
        return
    page_id = board_paper_page_id(case)
    sponsor = seat_account_id(case.decision_authority)
    if not page_id or not sponsor:
        return
    get_wiki().add_footer_comment(
        page_id=page_id,
        body=(
            f"The business case of {case.project.name} ({case.project.key}), version "
            f"{case.version}, was submitted for your approval."
        ),
        mention_account_ids=[sponsor],
    )
    BusinessCase.objects.filter(pk=case.pk).update(approval_nudge_sent_for=case.submitted_at)
