"""factory_boy factories. People and projects go through the local tracker's scripting
functions, so a test user is exactly what `local_tracker user` would make."""

import factory

from governance import permissions
from governance.models import EditorNomination, Project, User
from governance.tracker import get_tracker
from governance.tracker.local import scripting

PASSWORD = "test-pass-1"


class UserFactory(factory.Factory):
    class Meta:
        model = User

    username = factory.Sequence(lambda n: f"user{n}")
    display_name = factory.LazyAttribute(lambda o: o.username.replace("_", " ").title())
    admin = False

    @classmethod
    def _create(cls, model_class, username, display_name, admin):
        return scripting.ensure_user(
            username,
            display_name=display_name,
            admin=admin,
            password=PASSWORD,
            email=f"{username}@example.test",
        )


class ProjectFactory(factory.Factory):
    """A tracker project and its governance mirror."""

    class Meta:
        model = Project

    key = factory.Sequence(lambda n: f"PRJ{n}")
    name = factory.LazyAttribute(lambda o: f"Project {o.key}")
    lead = factory.SubFactory(UserFactory)
    browsers = factory.List([])

    @classmethod
    def _create(cls, model_class, key, name, lead, browsers):
        scripting.ensure_project(
            key, name=name, lead=lead.username, browsers=[b.username for b in browsers]
        )
        return permissions.sync_project(get_tracker().get_project(key))


def nominate(project: Project, user: User, by: User | None = None) -> EditorNomination:
    return EditorNomination.objects.create(
        project=project,
        account_id=user.account_id,
        nominated_by_account_id=(by.account_id if by else project.lead_account_id),
    )
