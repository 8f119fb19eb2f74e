"""What the tracker and wiki seams share: the error a remote service raises, and the backend
a setting names (governance.tracker, governance.wiki)."""

from collections.abc import Mapping


class RemoteError(Exception):
    """The remote service could not answer (down, misconfigured, refused)."""

    # Set by the Atlassian HTTP client (governance.atlassian.http) on the error it raises: a
    # POST that may have worked (`uncertain`), a 429's wait and its limit headers. Read with
    # getattr: an error raised elsewhere has none.
    uncertain: bool
    retry_after: int
    rate_limit: dict[str, str]


def backend_path(
    setting: str, name: str, backends: Mapping[str, str], error: type[Exception]
) -> str:
    """The dotted path of the backend `name` the setting chose; `error` naming the choices
    when there is no such backend."""
    try:
        return backends[name]
    except KeyError:
        raise error(
            f"{setting}={name!r} is not available; choose one of {', '.join(backends)}."
        ) from None
