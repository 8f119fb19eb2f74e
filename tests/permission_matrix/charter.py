"""Business case."""

from tests.permission_matrix import READ

CELLS = {
    "GET projects/<str:key>/charter/": READ,
}
