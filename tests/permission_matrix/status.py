"""Project status."""

from tests.permission_matrix import READ

CELLS = {
    "GET projects/<str:key>/status/": READ,
}
