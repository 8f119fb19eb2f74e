"""Registers."""

from tests.permission_matrix import READ

CELLS = {
    "GET projects/<str:key>/registers/": READ,
}
