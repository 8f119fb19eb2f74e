"""Waiting for me: across every project the person can view, the business cases and the
change requests that await their decision."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpResponse

if TYPE_CHECKING:
    pass


from django.shortcuts import render

from charter.selectors import waiting_for
from governance.http import HtmxHttpRequest, page
from governance.people import resolve


@page("GET")
def waiting(request: HtmxHttpRequest) -> HttpResponse:
    found = waiting_for(request)
    people = resolve([c.proposer_account_id or c.created_by_account_id for c in found["changes"]])
    return render(
        request,
        "charter/waiting.html",
        {**found, "people": people, "section": "waiting"},
    )
