"""Tokens at rest: Fernet with a rotatable key list. ATLASSIAN_TOKEN_KEY holds one or more
comma-separated Fernet keys; the first encrypts, every one decrypts (MultiFernet), so a key
is rotated by putting the new one first, running `manage.py atlassian_rotate_key`, then
dropping the old one."""

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


def _fernet() -> MultiFernet:
    keys = [k.strip() for k in settings.ATLASSIAN_TOKEN_KEY.split(",") if k.strip()]
    if not keys:
        raise ImproperlyConfigured(
            "ATLASSIAN_TOKEN_KEY is not set: generate one with "
            '`python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key()'
            '.decode())"`.'
        )
    try:
        return MultiFernet([Fernet(k) for k in keys])
    except ValueError:
        raise ImproperlyConfigured(
            "ATLASSIAN_TOKEN_KEY must be comma-separated Fernet keys (32 url-safe base64 bytes)."
        ) from None


def encrypt(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode() if value else ""


def decrypt(value: str) -> str:
    """'' when the value is empty or no configured key opens it (a dropped key)."""
    if not value:
        return ""
    try:
        return _fernet().decrypt(value.encode()).decode()
    except InvalidToken:
        return ""


def rotate(value: str) -> str:
    return _fernet().rotate(value.encode()).decode() if value else ""
