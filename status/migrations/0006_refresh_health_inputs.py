from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("status", "0005_exception_settled"),
    ]

    operations = [
        migrations.AddField(
            model_name="projecthealth",
            name="inputs",
            field=models.CharField(blank=True, default="", max_length=64),
        ),
    ]
