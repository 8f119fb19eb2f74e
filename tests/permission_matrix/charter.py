"""Business case: its pages, section saves, pickers, acts (one URL each, with the actor of
its lifecycle row), close-out, realisation, minutes, Waiting for me, and the API."""

from charter.acts import ACTS, BAU_OWNER, EDITOR, EDITOR_OR_SPONSOR, SPONSOR
from charter.models import BusinessCase
from tests.permission_matrix import (
    DENY,
    EDIT,
    HIDE,
    LEAD_ONLY,
    OK,
    READ,
    SIGNED_IN,
    SPONSOR_ONLY,
    profile,
)

EDITOR_OR_SPONSOR_CELLS = profile(DENY, outsider=HIDE, editor=OK, lead=OK, sponsor=OK)
# The matrix world names the viewer as the BAU owner of the close-out handover.
BAU_OWNER_CELLS = profile(DENY, outsider=HIDE, viewer=OK)
BY_WHO = {
    EDITOR: EDIT,
    SPONSOR: SPONSOR_ONLY,
    EDITOR_OR_SPONSOR: EDITOR_OR_SPONSOR_CELLS,
    BAU_OWNER: BAU_OWNER_CELLS,
}
NOTE_ID = "matrix-note"


def setup(world):
    """A Draft business case with one return note (for <note_id>); the viewer is the BAU
    owner in the kernel mirror (for the handover acknowledgement)."""
    BusinessCase.objects.update_or_create(
        project=world.project,
        defaults={
            "approval_status": "Draft",
            "return_notes": [
                {
                    "id": NOTE_ID,
                    "section": "outcome",
                    "ask": "Quantify it.",
                    "severity": "Minor",
                    "addressed": False,
                }
            ],
        },
    )
    world.project.bau_owner_account_id = world.cast.viewer.account_id
    world.project.save(update_fields=["bau_owner_account_id"])


RESOLVERS = {
    "note_id": lambda world, user: NOTE_ID,
}

HTML = "projects/<str:key>/charter/"
API = "api/v1/projects/<key>/"

CELLS = {
    # HTML
    f"GET {HTML}": READ,
    f"POST {HTML}edit/thesis/": EDIT,
    f"POST {HTML}edit/adoption/": EDIT,
    f"POST {HTML}edit/financial/": EDIT,
    f"GET {HTML}checklist/": READ,
    f"GET {HTML}people/": EDIT,
    f"POST {HTML}seats/": EDIT,
    f"GET {HTML}wiki/": EDIT,
    f"POST {HTML}links/": EDIT,
    f"POST {HTML}links/template/": EDIT,
    f"POST {HTML}return-notes/<str:note_id>/": EDIT,
    f"GET {HTML}closeout/": READ,
    f"POST {HTML}closeout/": EDIT,
    f"GET {HTML}realisation/": READ,
    f"POST {HTML}realisation/": EDITOR_OR_SPONSOR_CELLS,
    f"GET {HTML}minutes/": READ,
    f"POST {HTML}minutes/": EDIT,
    # Applying an approved change to its package's baseline (<change_id>: the registers world's).
    f"POST {HTML}changes/<uuid:change_id>/apply-to-baseline/": LEAD_ONLY,
    **{f"POST {HTML}acts/{name}/": BY_WHO[act.who] for name, act in ACTS.items()},
    "GET waiting/": SIGNED_IN,
    # A change decided from the queue (<change_id>: the registers world's, proposed by the
    # lead): the change service's gate, as on the register (the lead and an editor withdraw).
    "POST waiting/changes/<str:key>/<uuid:change_id>/decide/": profile(
        DENY, outsider=HIDE, editor=OK, lead=OK, sponsor=OK
    ),
    # API
    f"GET {API}charter": READ,
    f"PATCH {API}charter": EDIT,
    **{f"POST {API}charter/{name}": BY_WHO[act.who] for name, act in ACTS.items()},
    f"PATCH {API}charter/closeout": EDIT,
    f"PATCH {API}charter/realisation": EDITOR_OR_SPONSOR_CELLS,
    f"PATCH {API}charter/return-notes/<note_id>": EDIT,
    f"POST {API}charter/supporting-links/from-template": EDIT,
    f"GET {API}minutes": READ,
    f"POST {API}minutes": EDIT,
    f"POST {API}changes/<change_id>/apply-to-baseline": LEAD_ONLY,
}
