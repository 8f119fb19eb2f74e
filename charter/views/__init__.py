"""HTML views of the business case. Each authorises through governance.permissions, parses
its form with charter.forms and calls a service; the contexts live in charter.views.context."""
