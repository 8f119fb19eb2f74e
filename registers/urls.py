from django.urls import path, register_converter

from registers.views import changes, decisions, files, imports, risks, work_packages


class RegisterConverter:
    """One of the four registers, as its URL segment."""

    regex = "work-packages|risks|decisions|changes"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(RegisterConverter, "register")

app_name = "registers"
urlpatterns = [
    path("", files.index, name="index"),
    path("<register:register>/export/", files.export, name="export"),
    path("<register:register>/import/", imports.import_file, name="import"),
    path("<register:register>/template/", imports.template, name="import-template"),
    path("<register:register>/undo/", files.undo_delete, name="undo"),
    # Each register's list, add, detail, edit and delete pages, and its own acts.
    *work_packages.PAGES.get_urls(),
    *risks.PAGES.get_urls(),
    *decisions.PAGES.get_urls(),
    *changes.PAGES.get_urls(),
]
