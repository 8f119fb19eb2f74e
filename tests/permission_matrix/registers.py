"""Registers: the four register pages and their HTMX endpoints, exports and imports, and the
JSON API. Writes are for editors (the Project Lead and nominated editors); adjudicating a
change is for its approver (here: the sponsor, as none is named) and withdrawing it for its
proposer or an editor."""

from governance.tracker.local import scripting
from tests.factories import (
    ChangeRequestFactory,
    DecisionFactory,
    RiskFactory,
    WorkPackageFactory,
)
from tests.permission_matrix import DENY, EDIT, HIDE, OK, READ, profile


def setup(world):
    project = world.project
    scripting.ensure_issue("ALPHA-1", summary="Epic one")
    world.wp = WorkPackageFactory(project=project, linked_issue_keys=["ALPHA-1"])
    world.risk = RiskFactory(project=project, materialised=True)
    world.decision = DecisionFactory(project=project)
    world.change = ChangeRequestFactory(
        project=project, proposer_account_id=world.cast.lead.account_id
    )


RESOLVERS = {
    "wp_id": lambda world, user: world.wp.pk,
    "risk_id": lambda world, user: world.risk.pk,
    "decision_id": lambda world, user: world.decision.pk,
    "change_id": lambda world, user: world.change.pk,
    "issue_key": lambda world, user: "ALPHA-1",
    "register": lambda world, user: "work-packages",
}

# The sponsor approves or rejects (no approver named); the lead and editors may withdraw.
DECIDE = profile(DENY, outsider=HIDE, editor=OK, lead=OK, sponsor=OK)

R = "projects/<str:key>/registers/"
WP = R + "work-packages/<uuid:wp_id>/"
RISK = R + "risks/<uuid:risk_id>/"
DECISION = R + "decisions/<uuid:decision_id>/"
CHANGE = R + "changes/<uuid:change_id>/"
A = "api/v1/projects/<key>/"

CELLS = {
    # HTML: landing, exports, imports
    f"GET {R}": READ,
    f"GET {R}<register:register>/export/": READ,
    f"GET {R}<register:register>/import/": EDIT,
    f"POST {R}<register:register>/import/": EDIT,
    f"GET {R}<register:register>/template/": READ,
    f"POST {R}<register:register>/undo/": EDIT,
    # Work packages
    f"GET {R}work-packages/": READ,
    f"POST {R}work-packages/": EDIT,
    f"GET {R}work-packages/new/": EDIT,
    f"POST {R}work-packages/reorder/": EDIT,
    f"POST {R}work-packages/bulk/": EDIT,
    f"GET {WP}": READ,
    f"POST {WP}": EDIT,
    f"GET {WP}edit/": EDIT,
    f"POST {WP}delete/": EDIT,
    f"POST {WP}move/": EDIT,
    f"GET {WP}links/": EDIT,
    f"POST {WP}links/": EDIT,
    f"POST {WP}links/<str:issue_key>/delete/": EDIT,
    # Risks
    f"GET {R}risks/": READ,
    f"POST {R}risks/": EDIT,
    f"GET {R}risks/new/": EDIT,
    f"POST {R}risks/bulk/": EDIT,
    f"GET {RISK}": READ,
    f"POST {RISK}": EDIT,
    f"GET {RISK}edit/": EDIT,
    f"POST {RISK}delete/": EDIT,
    f"GET {RISK}record-decision/": EDIT,
    f"POST {RISK}record-decision/": EDIT,
    # Decisions
    f"GET {R}decisions/": READ,
    f"POST {R}decisions/": EDIT,
    f"GET {R}decisions/new/": EDIT,
    f"GET {DECISION}": READ,
    f"POST {DECISION}": EDIT,
    f"GET {DECISION}edit/": EDIT,
    f"GET {DECISION}notes/": EDIT,
    f"POST {DECISION}notes/": EDIT,
    # Change requests
    f"GET {R}changes/": READ,
    f"POST {R}changes/": EDIT,
    f"GET {R}changes/new/": EDIT,
    f"GET {CHANGE}": READ,
    f"POST {CHANGE}": EDIT,
    f"GET {CHANGE}edit/": EDIT,
    f"POST {CHANGE}delete/": EDIT,
    f"GET {CHANGE}adjudicate/": DECIDE,
    f"POST {CHANGE}adjudicate/": DECIDE,
    # API: exports and imports
    f"GET {A}<register>/export": READ,
    f"POST {A}<register>/import": EDIT,
    f"GET {A}<register>/template": READ,
    # API: work packages
    f"GET {A}work-packages": READ,
    f"POST {A}work-packages": EDIT,
    f"POST {A}work-packages/reorder": EDIT,
    f"GET {A}work-packages/<wp_id>": READ,
    f"PATCH {A}work-packages/<wp_id>": EDIT,
    f"DELETE {A}work-packages/<wp_id>": EDIT,
    f"POST {A}work-packages/<wp_id>/links": EDIT,
    f"DELETE {A}work-packages/<wp_id>/links/<issue_key>": EDIT,
    # API: risks
    f"GET {A}risks": READ,
    f"POST {A}risks": EDIT,
    f"GET {A}risks/<risk_id>": READ,
    f"PATCH {A}risks/<risk_id>": EDIT,
    f"DELETE {A}risks/<risk_id>": EDIT,
    f"POST {A}risks/<risk_id>/record-decision": EDIT,
    # API: decisions
    f"GET {A}decisions": READ,
    f"POST {A}decisions": EDIT,
    f"GET {A}decisions/<decision_id>": READ,
    f"PATCH {A}decisions/<decision_id>": EDIT,
    f"POST {A}decisions/<decision_id>/notes": EDIT,
    # API: change requests
    f"GET {A}changes": READ,
    f"POST {A}changes": EDIT,
    f"GET {A}changes/<change_id>": READ,
    f"PATCH {A}changes/<change_id>": EDIT,
    f"DELETE {A}changes/<change_id>": EDIT,
    f"POST {A}changes/<change_id>/adjudicate": DECIDE,
}
