"""The register pages (HTML + HTMX). One module per register; `base` holds what they share."""

from registers.views import changes, decisions, files, risks, work_packages

__all__ = ["changes", "decisions", "files", "risks", "work_packages"]
