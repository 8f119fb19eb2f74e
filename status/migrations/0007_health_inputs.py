from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("status", "0006_money_exact_on_sqlite"),
    ]

    operations = [
        migrations.AddField(
            model_name="projecthealth",
            name="inputs",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
    ]
