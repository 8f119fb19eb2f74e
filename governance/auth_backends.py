"""The signed-in user without a query per request (docs/decisions/0082, "The session and
the user from the shared cache"): the session comes from the shared cache (`cached_db`), and the
user row from the shared cache too, dropped on every save or delete of the row (and again
when the writing transaction commits), so a password change, a deactivation or a deletion
takes effect on the next request. The database stays the truth: a cache miss, or a cache
that does not answer, reads the row."""

import logging
from functools import partial
from typing import Any

from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.db import transaction

from governance.models import User

logger = logging.getLogger(__name__)

PATH = "governance.auth_backends.CachedModelBackend"
USER_CACHE_SECONDS = 300


def user_cache_key(user_id: object) -> str:
    return f"auth:user:v1:{user_id}"


class CachedModelBackend(ModelBackend):
    """Django's ModelBackend (password sign-in, permissions), the user read from the cache."""

    def get_user(self, user_id: Any) -> User | None:
        key = user_cache_key(user_id)
        user: User | None
        try:
            user = cache.get(key)
        except Exception:  # the cache is down: the database answers
            logger.warning("user cache unavailable", exc_info=True)
            user = None
        if user is None:
            user = super().get_user(user_id)
            if user is not None:
                try:
                    cache.set(key, user, USER_CACHE_SECONDS)
                except Exception:
                    logger.warning("user cache unavailable", exc_info=True)
            return user
        return user if self.user_can_authenticate(user) else None


def _forget(user_id: object) -> None:
    try:
        cache.delete(user_cache_key(user_id))
    except Exception:
        logger.warning("user cache unavailable", exc_info=True)


def forget_user(sender: type[User], instance: User, **kwargs: Any) -> None:
    """Drop the cached row now and once the write commits: a request that read the old row
    between the two cannot leave it cached."""
    if instance.pk is None:
        return
    _forget(instance.pk)
    transaction.on_commit(partial(_forget, instance.pk))
