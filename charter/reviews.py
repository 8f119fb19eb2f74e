"""When the next benefit review is due, as the realisation page shows it.

The project status app, above the charter, owns the review cadence (a project's override, the
site default) and the one computation of the due date that its page and the portfolio show. It
hands that function to the charter from its AppConfig.ready() (`answer_next_review_with`); the
page calls `next_review`, a plain call. Without the status app installed the page shows none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from charter.models import BusinessCase
    from governance.models import Project


from collections.abc import Callable
from typing import Any

NextReview = Callable[[Any, Any], dict[str, Any]]

_answer: NextReview | None = None


def answer_next_review_with(function: NextReview) -> None:
    global _answer
    _answer = function


def next_review(project: Project, case: BusinessCase) -> dict[str, Any]:
    """{cadence, cadenceSource, lastReviewAt, startedAt, dueOn, overdue}, or {} when no app
    owns the review cadence."""
    return _answer(project, case) if _answer is not None else {}
