"""The business-case arrangements (tests.charter.conftest) for the exception tests."""

from tests.charter.conftest import arrange, as_  # noqa: F401
