from django.apps import AppConfig


class InvestmentConfig(AppConfig):
    name = "investment"
    verbose_name = "Investment decisions"

    def ready(self) -> None:
        from governance.audit_text import register_app_words
        from investment import columns, vocabulary
        from portfolio import extensions

        register_app_words(vocabulary)
        # The score, rank and scenario columns of the portfolio (its page, API and exports).
        extensions.declare(columns.SOURCE)
        # The ranks are kept per reader (`governance.summaries`): a score or a model version
        # written raises their revision (a total's other inputs are the project's facts,
        # whose writes raise it already).
        from governance import summaries
        from investment.models import Criterion, ModelVersion, Score

        summaries.watch(Score, ModelVersion, Criterion)
