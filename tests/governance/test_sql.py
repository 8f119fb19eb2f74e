"""governance.sql: the lookups the ORM does not write by itself."""

import pytest
from django.db import connection
from django.db.models import F

from governance.models import Project
from governance.sql import AnyOf
from tests.factories import ProjectFactory


@pytest.mark.django_db
def test_any_of_is_in_with_one_parameter_on_postgresql():
    projects = [ProjectFactory() for _ in range(5)]
    ids = [p.pk for p in projects[:3]]
    chosen = Project.objects.filter(AnyOf(F("id"), ids)).order_by("id")
    assert list(chosen) == list(Project.objects.filter(id__in=ids).order_by("id"))
    assert list(Project.objects.filter(AnyOf(F("key"), [projects[4].key]))) == [projects[4]]
    assert list(Project.objects.filter(AnyOf(F("id"), []))) == []
    sql, params = Project.objects.filter(AnyOf(F("id"), list(range(1000)))).query.sql_with_params()
    if connection.vendor == "postgresql":
        assert "= ANY(%s::bigint[])" in sql and len(params) == 1  # one parameter, not a thousand
    else:
        assert " IN (" in sql and len(params) == 1000
