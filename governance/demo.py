"""Demo data of the kernel: the cast, the projects, their issues, groups and editors.
`manage.py seed_demo` runs this, then each app's `demo.seed(context)` in layer order."""

from dataclasses import dataclass, field

from governance import mirror, permissions, services
from governance.models import Project, SiteSettings, User
from governance.tracker import get_tracker
from governance.tracker.local import scripting

DEMO_PASSWORD = "governance-demo"
GOVERNANCE_GROUP = "governance"

# username -> (display name, what they show in the demo)
CAST = {
    "lena": (
        "Lena Lindqvist",
        "Project Lead of APOLLO, BRIDGE, CEDAR, DELTA, HARBOUR, JUNIPER, MOSAIC",
    ),
    "marco": ("Marco Rossi", "Project Lead of EMBER, FALCON, GARNET, IRIS, KESTREL, LUMEN, NIMBUS"),
    "edward": ("Edward Evans", "nominated editor on APOLLO, BRIDGE and EMBER"),
    "sofia": ("Sofia Santos", "sponsor (decision authority) of most business cases"),
    "victor": ("Victor Vance", "viewer: can browse every project, edits none"),
    "priya": ("Priya Patel", "PMO analyst, member of the governance group (portfolio)"),
    "oscar": ("Oscar Olsen", "outsider: can browse none of the demo projects"),
    "ada": ("Ada Adeyemi", "site administrator: settings and Django admin, edits nothing"),
}

PROJECTS = {
    "APOLLO": ("Customer portal relaunch", "lena"),
    "BRIDGE": ("Data centre exit", "lena"),
    "CEDAR": ("Finance system upgrade", "lena"),
    "DELTA": ("Warehouse automation", "lena"),
    "EMBER": ("Regulatory reporting 2027", "marco"),
    "FALCON": ("Field service mobile app", "marco"),
    "GARNET": ("Head office move", "marco"),
    "HARBOUR": ("Harbour logistics platform", "lena"),
    "IRIS": ("Invoice automation", "marco"),
    "JUNIPER": ("Self-service HR portal", "lena"),
    "KESTREL": ("Legacy CRM retirement", "marco"),
    "LUMEN": ("Branch lighting retrofit", "marco"),
    "MOSAIC": ("Data platform consolidation", "lena"),
    "NIMBUS": ("E-mail platform migration", "marco"),
}
EDITORS = {"APOLLO": ["edward"], "BRIDGE": ["edward"], "EMBER": ["edward"]}
EPICS = [
    "Discovery and requirements",
    "Solution design",
    "Build: core platform",
    "Build: integrations",
    "Data migration",
    "Testing and acceptance",
    "Training and adoption",
    "Go-live and hypercare",
]


@dataclass
class DemoContext:
    users: dict[str, User] = field(default_factory=dict)
    projects: dict[str, Project] = field(default_factory=dict)

    def account(self, name: str) -> str:
        return self.users[name].account_id

    def caller(self, name: str, project: Project) -> permissions.Caller:
        """The demo person acting on the project, as it stands now in the database."""
        project.refresh_from_db()
        return permissions.caller_for(self.users[name], project, can_browse=True)


def seed(stdout: object = None) -> DemoContext:
    ctx = DemoContext()
    for name, (display_name, _) in CAST.items():
        ctx.users[name] = scripting.ensure_user(
            name,
            display_name=display_name,
            admin=(name == "ada"),
            password=DEMO_PASSWORD,
            email=f"{name}@example.test",
        )
    browsers = [n for n in CAST if n != "oscar"]
    tracker = get_tracker()
    for key, (title, lead) in PROJECTS.items():
        scripting.ensure_project(key, name=title, lead=lead, browsers=browsers)
        for number, summary in enumerate(EPICS, start=1):
            scripting.ensure_issue(f"{key}-{number}", summary=summary)
        found = tracker.get_project(key)
        assert found is not None  # ensured just above
        ctx.projects[key] = mirror.sync_project(found)
    scripting.ensure_group(GOVERNANCE_GROUP, members=browsers)
    site = SiteSettings.load()
    if not site.governance_group:
        services.site_settings_update(
            actor=ctx.users["ada"], data={"governanceGroup": GOVERNANCE_GROUP}
        )
    for key, editors in EDITORS.items():
        project = ctx.projects[key]
        lead_user = ctx.users[PROJECTS[key][1]]
        caller = permissions.caller_for(lead_user, project, can_browse=True)
        wanted = sorted({*services.editor_account_ids(project), *(ctx.account(e) for e in editors)})
        if sorted(services.editor_account_ids(project)) != wanted:
            services.editors_set(caller=caller, account_ids=wanted)
    return ctx
